/**
 * A deployment's Lambda versions, as Lambda keeps them (API reference, DeleteFunction:
 * https://docs.aws.amazon.com/lambda/latest/api/API_DeleteFunction.html, ListVersionsByFunction,
 * and Invoke: https://docs.aws.amazon.com/lambda/latest/api/API_Invoke.html):
 *
 *   - each function has `$LATEST` and the numbered versions its deploys published (CDK retains old
 *     ones: local/aws/iam/deployment.ts gives each deploy's its numbers);
 *   - DeleteFunction with a `Qualifier` deletes that version only; a version that is not there
 *     (never published, or deleted) answers 404 ResourceNotFoundException, and so does an invoke
 *     of it — a Step Functions Task reports it as `Lambda.ResourceNotFoundException`
 *     (local/engine/lambda-task.ts);
 *   - `$LATEST` cannot be deleted by qualifier (InvalidParameterValueException); DeleteFunction
 *     without one deletes the whole function, which the twin refuses to stand in for (nothing in
 *     savepoint calls it: lambdas/adapters/lambda-versions.ts sends a numeric Qualifier always).
 *
 * Functions are named by the ARN local/aws/iam/deployment.ts gives them (their name is their
 * logical id); the tags a request is authorized with (`aws:ResourceTag/<key>`) are the template's.
 * Not modelled: Lambda aliases (no savepoint template has one), so no ResourceConflictException.
 */
import type { CfnTemplateJson } from '../template/asl.js';
import { AwsClientError } from './client-error.js';
import { RecentMap } from '../../lambdas/shared/recent-map.js';

const FUNCTION_ARN = /^arn:[^:]+:lambda:[^:]+:\d+:function:([^:]+)(?::([^:]+))?$/;

/** What the deployment says of the Lambda versions (local/aws/iam/deployment.ts DeploymentState): function logical id → the highest number published. */
export interface PublishedLambdaVersions {
  readonly publishedLambdaVersions: ReadonlyMap<string, number>;
}

export class LocalLambdaVersions {
  /** Qualified ARNs deleted. */
  readonly #deleted = new Set<string>();

  constructor(
    readonly current: () => { template: CfnTemplateJson; deployment: PublishedLambdaVersions },
  ) {}

  /** The function an ARN names (unqualified ARN, logical id, qualifier), ResourceNotFoundException when the template has no such function. */
  function(functionArn: string): FunctionName {
    const fn = parsedArns.getOrSet(functionArn, () => parseFunctionArn(functionArn));
    if (fn === undefined || this.current().template.Resources?.[fn.id]?.Type !== 'AWS::Lambda::Function') throw notFound(functionArn);
    return fn;
  }

  /** The request context of a call on the function: its tags from the template, as `aws:ResourceTag/<key>`. */
  tagContext(functionArn: string): Record<string, string> {
    const tags = this.current().template.Resources?.[this.function(functionArn).id]?.Properties?.['Tags'];
    const context: Record<string, string> = {};
    for (const tag of Array.isArray(tags) ? (tags as { Key?: unknown; Value?: unknown }[]) : []) {
      if (typeof tag.Key === 'string' && typeof tag.Value === 'string') context[`aws:ResourceTag/${tag.Key}`] = tag.Value;
    }
    return context;
  }

  /** ListVersionsByFunction: `$LATEST`, then each published version not deleted, oldest first. */
  list(functionArn: string): string[] {
    const fn = this.function(functionArn);
    const published = this.current().deployment.publishedLambdaVersions.get(fn.id) ?? 0;
    const numbers = Array.from({ length: published }, (_, index) => index + 1).filter((number) => !this.#deleted.has(`${fn.arn}:${number}`));
    return ['$LATEST', ...numbers.map(String)];
  }

  /** DeleteFunction with `Qualifier`: that version gone for good. */
  delete(functionArn: string, qualifier: string): void {
    const fn = this.function(functionArn);
    if (fn.qualifier !== undefined) throw new AwsClientError('InvalidParameterValueException', `The function ARN ${functionArn} and the Qualifier ${qualifier} both qualify it: give one`);
    if (qualifier === '$LATEST') throw new AwsClientError('InvalidParameterValueException', '$LATEST version cannot be deleted without deleting the function.');
    const arn = `${fn.arn}:${qualifier}`;
    if (!this.#exists(fn, qualifier)) throw notFound(arn);
    this.#deleted.add(arn);
  }

  /** Throws what Lambda answers an invoke of a version that is not there (ResourceNotFoundException). */
  assertInvokable(functionArn: string): void {
    const fn = this.function(functionArn);
    if (fn.qualifier !== undefined && !this.#exists(fn, fn.qualifier)) throw notFound(functionArn);
  }

  #exists(fn: { arn: string; id: string }, qualifier: string): boolean {
    if (qualifier === '$LATEST') return true;
    if (!/^\d+$/.test(qualifier)) return false;
    // (No version deleted, as in most deployments: no qualified ARN to make and look up.)
    return Number(qualifier) <= (this.current().deployment.publishedLambdaVersions.get(fn.id) ?? 0) && (this.#deleted.size === 0 || !this.#deleted.has(`${fn.arn}:${qualifier}`));
  }
}

/** A function ARN's parts: the unqualified ARN, the function's logical id, its qualifier. */
type FunctionName = { readonly arn: string; readonly id: string; readonly qualifier?: string };

function parseFunctionArn(functionArn: string): FunctionName | undefined {
  const match = FUNCTION_ARN.exec(functionArn);
  const id = match?.[1];
  if (id === undefined) return undefined;
  return Object.freeze({ arn: match![2] === undefined ? functionArn : functionArn.slice(0, -(match![2].length + 1)), id, ...(match![2] !== undefined && { qualifier: match![2] }) });
}

/**
 * Each ARN's parts, worked out once: every Task's invoke names its function's ARN (a few ARNs, a
 * version each per deploy), and the parts of a string never change. Whether the template has the
 * function, and the version, is asked on every call.
 */
const parsedArns = new RecentMap<string, FunctionName | undefined>(256);

function notFound(arn: string): AwsClientError {
  return new AwsClientError('ResourceNotFoundException', `Function not found: ${arn}`, 404);
}
