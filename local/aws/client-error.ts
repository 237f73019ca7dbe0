/**
 * What an AWS service answers a request it refuses as the caller's fault (HTTP 4xx): an error whose
 * `name` is the service's error code, as the SDKs hand it over (`$fault: 'client'`, the status). The
 * twin's rules throw it where AWS would refuse (a template CloudFormation would not deploy, an
 * invoke Lambda throttles).
 */
export class AwsClientError extends Error {
  readonly $fault = 'client';
  constructor(
    name: string,
    message: string,
    readonly statusCode = 400,
  ) {
    super(message);
    this.name = name;
  }
}
