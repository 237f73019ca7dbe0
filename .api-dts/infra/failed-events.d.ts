import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
/**
 * Lose nothing: EventBridge invokes a Lambda asynchronously, and the rule's dead-letter queue only
 * receives events it could not *deliver*. An event delivered to a function that then fails — past
 * Lambda's own async retries — is gone unless the function has an on-failure destination. Every
 * event-driven function of an agent (recovery, execution stopped, approval expiry, sweeper) sends
 * such events here: an encrypted queue kept 14 days, with an alarm on any message in it
 * (infra/observability.ts). The message carries the original event and the error, for a replay.
 */
export declare class FailedEvents extends Construct {
    readonly queue: Queue;
    constructor(scope: Construct, id: string);
    /** Sends `fn`'s failed asynchronous invocations here after `retryAttempts` Lambda retries. */
    protect(fn: IFunction, retryAttempts?: number): void;
}
