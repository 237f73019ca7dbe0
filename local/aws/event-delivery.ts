/**
 * EventBridge delivers a rule's event to its target at least once, not exactly once
 * (EventBridge User Guide, "Troubleshooting Amazon EventBridge", "My rule ran more than once in
 * response to one event": https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-troubleshooting.html),
 * and a Lambda function invoked asynchronously, as a rule's target is, may receive one event more
 * than once even when nothing failed, its queue being eventually consistent (Lambda Developer
 * Guide, https://docs.aws.amazon.com/lambda/latest/dg/invocation-async-error-handling.html): a
 * second copy may come after the first was handled, or while it still runs.
 *
 * Nothing on AWS takes the copies out for us: a handler of a status change must come to the same
 * end however many it gets. The local stack's `statusChangeDeliveries` (LocalStackOptions) makes
 * the twin deliver each "Execution Status Change" that many times, one after the other or all at
 * once, so that tests hold the handlers to it. It refuses nothing on AWS: it bounds the option.
 */

/** How many times each event reaches its target, and whether the copies overlap. */
export interface EventDeliveries {
  readonly times: number;
  readonly overlapping: boolean;
}

/** The most copies the twin makes: enough to show a handler that is not idempotent, few enough to stay fast. */
const MOST_DELIVERIES = 3;

/**
 * `statusChangeDeliveries` as the stack reads it: a number is that many deliveries one after the
 * other; `{ times, overlapping: true }` that many at once. Default one: the tests of everything
 * else stay deterministic (a copy would interleave with whatever the test does next), and a
 * duplicate is AWS's rare case, not its common one.
 */
export function eventDeliveries(option: number | { readonly times: number; readonly overlapping?: boolean } | undefined): EventDeliveries {
  const times = typeof option === 'object' && option !== null ? option.times : (option ?? 1);
  if (!Number.isInteger(times) || times < 1 || times > MOST_DELIVERIES) {
    throw new RangeError(`statusChangeDeliveries must be a whole number from 1 to ${MOST_DELIVERIES}, got ${JSON.stringify(times)}`);
  }
  return { times, overlapping: typeof option === 'object' && option !== null && option.overlapping === true };
}

/**
 * Delivers `event` to `deliver` as often as `deliveries` says: each copy its own (as each reaches a
 * Lambda function as JSON of its own), the next once the last settled, or all at once. Each
 * delivery's failure goes to `failed`, as one invocation's failure does not stop another's.
 */
export async function deliverEvent<E>(deliveries: EventDeliveries, event: E, deliver: (event: E) => Promise<unknown>, failed: (error: unknown) => void): Promise<void> {
  const once = (copy: E) => deliver(copy).then(() => undefined, failed);
  const copies = Array.from({ length: deliveries.times }, (_, index) => (index === 0 ? event : structuredClone(event)));
  if (deliveries.overlapping) {
    await Promise.all(copies.map(once));
    return;
  }
  for (const copy of copies) await once(copy);
}
