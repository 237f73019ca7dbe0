/**
 * A Lambda function's environment variables hold at most 4 KB together (Lambda quotas: "Total size
 * of environment variables: 4 KB", https://docs.aws.amazon.com/lambda/latest/dg/gettingstarted-limits.html),
 * measured as one JSON object (lambdas/shared/lambda-environment.ts). Over it, CloudFormation's
 * create or update of the function fails with Lambda's InvalidParameterValueException ("Lambda was
 * unable to configure your environment variables because the environment variables you have
 * provided exceeded the 4KB limit") and the stack rolls back: the local stack refuses such a
 * template at its start and at a deploy (local/aws/cloudformation-template.ts).
 */
import { environmentOverLimit } from '../../lambdas/shared/lambda-environment.js';
import { AwsClientError } from './client-error.js';

/** What Lambda answers a function whose environment is over the limit. */
export class EnvironmentTooLargeError extends AwsClientError {
  constructor(message: string) {
    super('InvalidParameterValueException', message);
  }
}

/** Refuses, as Lambda would, a function whose environment variables are over 4 KB, naming it. */
export function assertEnvironmentFits(logicalId: string, variables: Readonly<Record<string, unknown>>): void {
  const why = environmentOverLimit(variables);
  if (why) throw new EnvironmentTooLargeError(`Resource ${logicalId} (AWS::Lambda::Function): Lambda was unable to configure your environment variables because the environment variables you have provided exceeded the 4KB limit: ${why}`);
}
