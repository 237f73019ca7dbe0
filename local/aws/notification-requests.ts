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
import { EVENTBRIDGE_PUT_EVENTS_MAX_BYTES, EVENTBRIDGE_PUT_EVENTS_MAX_ENTRIES, SNS_MESSAGE_MAX_BYTES, SNS_SUBJECT_MAX_LENGTH } from '../../lambdas/shared/limits.js';

/** What SNS or EventBridge answers a request it refuses before doing anything: a client error, HTTP 400. */
export class ServiceRequestError extends Error {
  readonly statusCode = 400;
  readonly $fault = 'client';
  constructor(name: 'InvalidParameterException' | 'ValidationException', message: string) {
    super(message);
    this.name = name;
  }
}

/** Throws as SNS would for a `Publish` it refuses. */
export function checkPublish(message: TopicMessage): void {
  const subject = message.Subject;
  if (subject.length > SNS_SUBJECT_MAX_LENGTH || !/^[\x20-\x7e]+$/.test(subject) || !/^[A-Za-z0-9\p{P}]/u.test(subject)) {
    throw new ServiceRequestError('InvalidParameterException', 'Invalid parameter: Subject');
  }
  if (message.Message.length === 0 || Buffer.byteLength(message.Message) > SNS_MESSAGE_MAX_BYTES) {
    throw new ServiceRequestError('InvalidParameterException', 'Invalid parameter: Message too long');
  }
  for (const [name, attribute] of Object.entries(message.MessageAttributes ?? {})) {
    if (attribute.StringValue.length === 0) throw new ServiceRequestError('InvalidParameterException', `Invalid parameter: Message attribute ${name} must contain non-empty message attribute value`);
  }
}

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
export function checkPutEvents(entries: readonly EventEntry[]): FailedEntry[] {
  if (entries.length < 1 || entries.length > EVENTBRIDGE_PUT_EVENTS_MAX_ENTRIES) {
    throw new ServiceRequestError('ValidationException', `1 validation error detected: Value at 'entries' failed to satisfy constraint: Member must have length between 1 and ${EVENTBRIDGE_PUT_EVENTS_MAX_ENTRIES}`);
  }
  const size = entries.reduce((sum, entry) => sum + Buffer.byteLength(entry.Source) + Buffer.byteLength(entry.DetailType) + Buffer.byteLength(entry.Detail), 0);
  if (size >= EVENTBRIDGE_PUT_EVENTS_MAX_BYTES) throw new ServiceRequestError('ValidationException', 'Total size of the entries in the request is over the limit.');
  return entries.flatMap((entry, index): FailedEntry[] => {
    if (!entry.Source || !entry.DetailType) return [{ index, errorCode: 'InvalidArgument' }];
    return isJsonObject(entry.Detail) ? [] : [{ index, errorCode: 'MalformedDetail' }];
  });
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}
