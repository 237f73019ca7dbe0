/**
 * The request rules of the two services the approval notifier calls, as AWS states them, so a
 * request that AWS would refuse is refused locally too (the twin builds the very requests the AWS
 * notifier sends: lambdas/approvals/notify.ts `notificationRequests`):
 *
 *   SNS Publish       Subject: ASCII text beginning with a letter, number or punctuation mark, no
 *                     line breaks or control characters, under 100 characters; Message: at most
 *                     256 KB of UTF-8; a String message attribute's value is not empty.
 *                     https://docs.aws.amazon.com/sns/latest/api/API_Publish.html
 *   EventBridge       1 to 10 entries; each with Source, DetailType and a Detail that is a JSON
 *   PutEvents         object; the entries together under 256 KB (Source, DetailType, Detail in
 *                     UTF-8 bytes). https://docs.aws.amazon.com/eventbridge/latest/APIReference/API_PutEvents.html,
 *                     https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-putevent-size.html
 *
 * A refused Publish throws InvalidParameterException (HTTP 400), as SNS answers it. PutEvents
 * refuses a request over its entry count or size as a whole (ValidationException), and an entry
 * without a JSON-object Detail on its own (`MalformedDetail`, counted in FailedEntryCount).
 */
import type { EventEntry, TopicMessage } from '../../lambdas/approvals/notify.js';
/** What SNS or EventBridge answers a request it refuses before doing anything: a client error, HTTP 400. */
export declare class ServiceRequestError extends Error {
    readonly statusCode = 400;
    readonly $fault = "client";
    constructor(name: 'InvalidParameterException' | 'ValidationException', message: string);
}
/** Throws as SNS would for a `Publish` it refuses. */
export declare function checkPublish(message: TopicMessage): void;
/** An entry EventBridge did not put: its index in the request and the error code it answers. */
export interface FailedEntry {
    readonly index: number;
    readonly errorCode: 'MalformedDetail' | 'InvalidArgument';
}
/**
 * Checks a `PutEvents` as EventBridge would: throws for a request it refuses whole, and answers the
 * entries it would fail one by one (their index and error code), which the caller reads from
 * `FailedEntryCount` as it would from AWS.
 */
export declare function checkPutEvents(entries: readonly EventEntry[]): FailedEntry[];
