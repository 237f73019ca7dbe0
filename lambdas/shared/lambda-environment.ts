/**
 * The size Lambda measures a function's environment by, against its 4 KB limit
 * (`LAMBDA_ENVIRONMENT_MAX_BYTES`, lambdas/shared/limits.ts): the variables as one JSON object,
 * names and quotes included — Lambda's refusal quotes what it measured
 * (InvalidParameterValueException "… exceeded the 4KB limit. String measured: {…}"). One measure for
 * the two places that check it: savepoint/cdk at synth (infra/step-function.ts) and the local
 * twin at deploy (local/aws/lambda-environment-size.ts).
 *
 * A template's value that CloudFormation resolves at deploy (a `Ref`, an `Fn::GetAtt`, an
 * `Fn::Join` of them) is not known before it: each counts as {@link RESOLVED_REFERENCE_CHARS}
 * characters, more than any name or ARN the construct passes (a KMS key ARN is 75, a Secrets
 * Manager secret ARN about 90, a generated table name about 60).
 */
import { LAMBDA_ENVIRONMENT_MAX_BYTES } from './limits.js';

/**
 * A variable's name as Lambda takes it: a letter, then at least one letter, digit or `_` (Lambda API
 * reference, `Environment`: "Key Pattern: [a-zA-Z]([a-zA-Z0-9_])+"; CloudFormation's schema of
 * `AWS::Lambda::Function` refuses any other key at deploy).
 */
export const LAMBDA_ENVIRONMENT_NAME = /^[a-zA-Z][a-zA-Z0-9_]+$/;

/** What a value CloudFormation resolves at deploy counts as, in characters. */
export const RESOLVED_REFERENCE_CHARS = 128;

/** The variables as Lambda measures them, in UTF-8 bytes (unresolved values as {@link RESOLVED_REFERENCE_CHARS} characters). */
export function environmentBytes(variables: Readonly<Record<string, unknown>>): number {
  const measured = Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, typeof value === 'string' ? value : 'x'.repeat(RESOLVED_REFERENCE_CHARS)]));
  return Buffer.byteLength(JSON.stringify(measured), 'utf8');
}

/**
 * Why Lambda would refuse these variables — their size, the limit and the largest of them, what to
 * move to a parameter, a secret or the agent's code — or undefined when they fit.
 */
export function environmentOverLimit(variables: Readonly<Record<string, unknown>>): string | undefined {
  const bytes = environmentBytes(variables);
  if (bytes <= LAMBDA_ENVIRONMENT_MAX_BYTES) return undefined;
  const largest = Object.entries(variables)
    .map(([name, value]) => [name, environmentBytes({ [name]: value })] as const)
    .sort((a, b) => b[1] - a[1])
    .slice(0, 3)
    .map(([name, size]) => `${name} (${size} bytes)`)
    .join(', ');
  return `its environment variables measure ${bytes} bytes as Lambda counts them (one JSON object), over Lambda's ${LAMBDA_ENVIRONMENT_MAX_BYTES}; the largest are ${largest}`;
}
