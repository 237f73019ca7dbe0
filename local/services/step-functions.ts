/**
 * A loopback HTTP endpoint speaking the Step Functions AWS JSON 1.0 protocol, so the real
 * @aws-sdk/client-sfn (endpoint http://127.0.0.1:<port>) drives a LocalEngine.
 */
import type { HttpHandlerOptions, HttpRequest, HttpResponse } from '@smithy/types';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { DROPPED, serveHttp, type HttpService, type ServiceReply, type ServiceRequest } from '../../sim/in-process.js';
import { LocalSfnError, paginate, type LocalEngine } from '../engine/local-engine.js';
import type { IamAuthorizer } from '../aws/iam/authorizer.js';
import type { RoleCredentials } from '../aws/iam/credentials.js';
import { sfnAuthorizationRequest, splitQualifier } from '../aws/iam/step-functions.js';
import type { SfnQuotas } from '../aws/sfn-api-throttling.js';
import { credentialedUrl, MISSING_CREDENTIAL, newLoopbackCredential, requireCredential } from './loopback-credential.js';

const TARGET_PREFIX = 'AWSStepFunctions.';
const MAX_BODY_BYTES = 2 * 1024 * 1024; // generous: the largest legal request is a 256 KiB payload

const arn = z.string().min(1);
const status = z.enum(['RUNNING', 'SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT']);
const maxResults = z.number().int().min(0).max(1000).optional();

const schemas = {
  StartExecution: z.object({ stateMachineArn: arn, name: z.string().optional(), input: z.string().optional(), traceHeader: z.string().optional() }),
  DescribeExecution: z.object({ executionArn: arn }),
  ListExecutions: z.object({ stateMachineArn: arn.optional(), statusFilter: status.optional(), maxResults, nextToken: z.string().optional() }),
  StopExecution: z.object({ executionArn: arn, error: z.string().max(256).optional(), cause: z.string().max(32768).optional() }),
  SendTaskSuccess: z.object({ taskToken: z.string().min(1), output: z.string() }),
  SendTaskFailure: z.object({ taskToken: z.string().min(1), error: z.string().max(256).optional(), cause: z.string().max(32768).optional() }),
  SendTaskHeartbeat: z.object({ taskToken: z.string().min(1) }),
  GetExecutionHistory: z.object({
    executionArn: arn,
    maxResults,
    reverseOrder: z.boolean().optional(),
    nextToken: z.string().optional(),
    includeExecutionData: z.boolean().optional(),
  }),
  DescribeStateMachine: z.object({ stateMachineArn: arn }),
  DescribeStateMachineForExecution: z.object({ executionArn: arn }),
  ListStateMachineVersions: z.object({ stateMachineArn: arn, maxResults, nextToken: z.string().optional() }),
  ListStateMachineAliases: z.object({ stateMachineArn: arn, maxResults, nextToken: z.string().optional() }),
  DescribeStateMachineAlias: z.object({ stateMachineAliasArn: arn }),
  DeleteStateMachineVersion: z.object({ stateMachineVersionArn: arn }),
};

type Operation = keyof typeof schemas;
type Handlers = { [K in Operation]: (engine: LocalEngine, req: z.infer<(typeof schemas)[K]>) => unknown };

const handlers: Handlers = {
  StartExecution: (engine, req) => {
    // A version ARN (`<machine>:<n>`) starts on that version, an alias ARN (`<machine>:<alias>`) on
    // the version the alias routes to, as the service does; the machine's own, on the newest.
    const { stateMachineArn, qualifier } = splitQualifier(req.stateMachineArn);
    checkStateMachine(engine, stateMachineArn);
    const on = qualifier === undefined ? {} : /^\d+$/.test(qualifier) ? { version: Number(qualifier) } : { alias: qualifier };
    return engine.startExecution({ ...(req.name !== undefined && { name: req.name }), input: req.input ?? '{}', ...on });
  },
  DescribeExecution: (engine, req) => engine.describeExecution(req.executionArn),
  // On a version ARN, the executions that run that version (what a version pruner asks before deleting it).
  ListExecutions: (engine, req) => {
    if (req.stateMachineArn === undefined) return engine.listExecutions(req);
    const { stateMachineArn, qualifier } = splitQualifier(req.stateMachineArn);
    checkStateMachine(engine, stateMachineArn);
    const { stateMachineArn: _arn, ...rest } = req;
    if (qualifier === undefined) return engine.listExecutions(rest);
    return engine.listExecutions({ ...rest, version: versionNumber(engine, req.stateMachineArn, qualifier) });
  },
  StopExecution: (engine, req) => engine.stopExecution(req.executionArn, req),
  SendTaskSuccess: (engine, req) => (engine.sendTaskSuccess(req.taskToken, req.output), {}),
  SendTaskFailure: (engine, req) => (engine.sendTaskFailure(req.taskToken, req.error, req.cause), {}),
  SendTaskHeartbeat: (engine, req) => (engine.sendTaskHeartbeat(req.taskToken), {}),
  GetExecutionHistory: (engine, req) => {
    const events = engine.getExecutionHistory(req.executionArn, { reverseOrder: req.reverseOrder ?? false });
    const page = paginate(events, req.maxResults || 1000, req.nextToken);
    return { events: page.items, ...(page.nextToken && { nextToken: page.nextToken }) };
  },
  // "If you specify a state machine version ARN, this API returns details about that version" (API reference, DescribeStateMachine).
  DescribeStateMachine: (engine, req) => {
    const { stateMachineArn, qualifier } = splitQualifier(req.stateMachineArn);
    if (qualifier === undefined || !/^\d+$/.test(qualifier)) {
      checkStateMachine(engine, req.stateMachineArn);
      return engine.describeStateMachine();
    }
    checkStateMachine(engine, stateMachineArn);
    return engine.describeVersion(Number(qualifier));
  },
  // The definition of the version the execution runs (throws for an unknown execution).
  DescribeStateMachineForExecution: (engine, req) => {
    const version = engine.versionOf(req.executionArn);
    const { stateMachineArn, name, roleArn, creationDate } = engine.describeStateMachine();
    return { stateMachineArn, name, definition: JSON.stringify(version.definition), roleArn, updateDate: creationDate };
  },
  ListStateMachineVersions: (engine, req) => {
    checkStateMachine(engine, req.stateMachineArn);
    const page = paginate(engine.listVersions(), req.maxResults || 1000, req.nextToken);
    return { stateMachineVersions: page.items, ...(page.nextToken && { nextToken: page.nextToken }) };
  },
  ListStateMachineAliases: (engine, req) => {
    checkStateMachine(engine, req.stateMachineArn);
    const page = paginate(engine.listAliases().map(({ stateMachineAliasArn, creationDate }) => ({ stateMachineAliasArn, creationDate })), req.maxResults || 1000, req.nextToken);
    return { stateMachineAliases: page.items, ...(page.nextToken && { nextToken: page.nextToken }) };
  },
  DescribeStateMachineAlias: (engine, req) => {
    const alias = engine.listAliases().find((candidate) => candidate.stateMachineAliasArn === req.stateMachineAliasArn);
    if (!alias) throw new LocalSfnError('ResourceNotFound', `Resource not found: '${req.stateMachineAliasArn}'`);
    const { name, stateMachineAliasArn, stateMachineVersionArn, creationDate } = alias;
    return { stateMachineAliasArn, name, routingConfiguration: [{ stateMachineVersionArn, weight: 100 }], creationDate, updateDate: creationDate };
  },
  DeleteStateMachineVersion: (engine, req) => {
    const { stateMachineArn, qualifier } = splitQualifier(req.stateMachineVersionArn);
    checkStateMachine(engine, stateMachineArn);
    if (qualifier === undefined || !/^\d+$/.test(qualifier)) throw new LocalSfnError('ValidationException', `Invalid Arn: not a state machine version ARN: '${req.stateMachineVersionArn}'`);
    engine.deleteVersion(Number(qualifier));
    return {};
  },
};

/** The version a qualified ARN names: its number, or the version its alias routes to. */
function versionNumber(engine: LocalEngine, arn: string, qualifier: string): number {
  if (/^\d+$/.test(qualifier)) return Number(qualifier);
  const alias = engine.listAliases().find((candidate) => candidate.name === qualifier);
  if (!alias) throw new LocalSfnError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${arn}'`);
  return Number(alias.stateMachineVersionArn.split(':').pop());
}

export interface SfnEndpoint {
  url: string;
  port: number;
  /**
   * An SDK request handler that reaches this endpoint in process (the same service, no socket):
   * `new SFNClient({ endpoint: url, requestHandler })` still serializes, signs and parses every
   * call as the SDK does, without the loopback round trip. Other hosts are refused.
   */
  requestHandler: InProcessRequestHandler;
  close(): Promise<void>;
}

/**
 * The twin's IAM at this endpoint: who signed each call (by its access key) and whether that
 * caller's role may make it. @default no IAM (every call allowed)
 */
export interface SfnEndpointIam {
  readonly authorizer: IamAuthorizer;
  readonly credentials: RoleCredentials;
}

export async function startSfnEndpoint(engine: LocalEngine, opts: { port?: number; iam?: SfnEndpointIam; quotas?: SfnQuotas; credential?: string } = {}): Promise<SfnEndpoint> {
  // Served only to the state directory's owner (local/services/loopback-credential.ts); `url` carries the credential.
  const credential = opts.credential ?? newLoopbackCredential();
  const service = requireCredential(sfnService(engine, opts.iam, opts.quotas), credential, () => reply(400, { __type: 'UnrecognizedClientException', message: `The security token included in the request is invalid: ${MISSING_CREDENTIAL}` }));
  const served = await serveHttp(service, {
    port: opts.port,
    maxBodyBytes: MAX_BODY_BYTES,
    tooLarge: () => reply(400, { __type: 'ValidationException', message: `Request body larger than ${MAX_BODY_BYTES} bytes` }),
    failed: (e) => reply(500, { __type: 'InternalFailure', message: e instanceof Error ? e.message : String(e) }),
  });
  const url = credentialedUrl(served.url, credential);
  return { url, port: served.port, requestHandler: new InProcessRequestHandler(url, service), close: served.close };
}

/** The Step Functions JSON 1.0 protocol over the engine, as a function from request to reply. */
/**
 * @param iam who may call what (local/aws/iam) @default every call allowed
 * @param quotas the per-account API throttling (local/aws/sfn-api-throttling.ts) @default none
 */
export function sfnService(engine: LocalEngine, iam?: SfnEndpointIam, quotas?: SfnQuotas): HttpService {
  return async (request) => {
    try {
      return reply(200, await handle(engine, request, iam, quotas));
    } catch (e) {
      if (e instanceof LocalSfnError) return reply(400, { __type: e.name, message: e.message });
      return reply(500, { __type: 'InternalFailure', message: e instanceof Error ? e.message : String(e) });
    }
  };
}

async function handle(engine: LocalEngine, req: ServiceRequest, iam?: SfnEndpointIam, quotas?: SfnQuotas): Promise<unknown> {
  const target = req.headers['x-amz-target'];
  const operation = typeof target === 'string' && target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : '';
  if (req.method !== 'POST' || !(operation in handlers)) {
    throw new LocalSfnError('UnknownOperationException', `Unknown operation ${String(target)}`);
  }
  const text = req.body;
  let body: unknown;
  try {
    body = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new LocalSfnError('SerializationException', 'The request body is not valid JSON');
  }
  const op = operation as Operation;
  const parsed = schemas[op].safeParse(body);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `Value at '${i.path.join('.') || '(body)'}' failed to satisfy constraint: ${i.message}`);
    throw new LocalSfnError('ValidationException', `${issues.length} validation error(s) detected: ${issues.join('; ')}`);
  }
  if (iam) authorizeCall(iam, engine, op, parsed.data as Record<string, unknown>, req.headers['authorization']);
  quotas?.take(op);
  return await (handlers[op] as (engine: LocalEngine, req: unknown) => unknown)(engine, parsed.data);
}

/**
 * IAM, as the service applies it before it acts: the caller is known by its access key (a role's,
 * or else the account's administrator: local/aws/iam/credentials.ts), and its role's policies must allow
 * the call on the resource Step Functions authorizes it against (AccessDeniedException otherwise;
 * local/aws/iam/step-functions.ts has the version and alias rule).
 */
function authorizeCall(iam: SfnEndpointIam, engine: LocalEngine, operation: Operation, body: Record<string, unknown>, authorization: string | undefined): void {
  const caller = iam.credentials.callerOf(authorization);
  const request = sfnAuthorizationRequest(operation, body, (token) => engine.stateMachineOfToken(token));
  if (!request) return;
  try {
    iam.authorizer.authorize(caller, request);
  } catch (error) {
    throw new LocalSfnError('AccessDeniedException', error instanceof Error ? error.message : String(error));
  }
}

function checkStateMachine(engine: LocalEngine, stateMachineArn: string): void {
  if (stateMachineArn !== engine.stateMachineArn) {
    throw new LocalSfnError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${stateMachineArn}'`);
  }
}

function reply(status: number, body: unknown): ServiceReply {
  return {
    status,
    headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amzn-requestid': randomUUID() },
    body: JSON.stringify(body, epochSeconds),
  };
}

/** The JSON protocol sends timestamps as epoch seconds; Date.toJSON has already run, so read the holder. */
function epochSeconds(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  return raw instanceof Date ? raw.getTime() / 1000 : value;
}

/** Bytes as text, read through a plain view: the SDK's JSON body is a Uint8Array subclass that warns when treated as a string. */
function utf8(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/**
 * The smithy `HttpHandler` shape (what `requestHandler` takes), answering from `service` in process.
 * Only requests to the endpoint's own host and port are served.
 */
export class InProcessRequestHandler {
  readonly #host: string;
  readonly #service: HttpService;
  readonly metadata = { handlerProtocol: 'http/1.1' };

  constructor(url: string, service: HttpService) {
    this.#host = new URL(url).host;
    this.#service = service;
  }

  async handle(request: HttpRequest, options?: HttpHandlerOptions): Promise<{ response: HttpResponse }> {
    (options?.abortSignal as AbortSignal | undefined)?.throwIfAborted?.();
    const host = request.port === undefined ? request.hostname : `${request.hostname}:${request.port}`;
    if (host !== this.#host) throw new Error(`the in-process Step Functions handler serves ${this.#host}, not ${host}`);
    const query = new URLSearchParams(Object.entries(request.query ?? {}).flatMap(([key, value]) => (Array.isArray(value) ? value.map((item) => [key, item]) : value == null ? [] : [[key, value]]))).toString();
    const headers = Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name.toLowerCase(), value]));
    const body = typeof request.body === 'string' ? request.body : request.body instanceof Uint8Array ? utf8(request.body) : '';
    const answer = await this.#service({ method: request.method, url: `${request.path}${query && `?${query}`}`, headers, body });
    if (answer === DROPPED) throw new Error('the in-process Step Functions endpoint dropped its answer');
    return { response: { statusCode: answer.status, headers: { ...answer.headers }, body: Buffer.from(answer.body) } };
  }

  updateHttpClientConfig(): void {}

  httpHandlerConfigs(): Record<string, never> {
    return {};
  }

  destroy(): void {}
}
