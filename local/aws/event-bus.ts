/**
 * The account's default event bus, as the twin's functions put events on it: what a rule on the
 * bus with no pattern beyond the source would receive (every entry put, in order). The approval
 * notifier's events go here after the twin authorized them and checked them against EventBridge's
 * request rules (local/aws/iam/services.ts); a test reads it as such a rule's target would, and so
 * can see what any rule in the account could read (no approver's link: lambdas/approvals/notify.ts).
 * Bounded: the oldest entries leave once LIMIT newer ones are kept.
 */
import type { EventEntry } from '../../lambdas/approvals/notify.js';

const LIMIT = 1_000;

export class LocalEventBus {
  readonly #entries: EventEntry[] = [];

  /** Entries EventBridge accepted (a failed entry is not on the bus). */
  put(entries: readonly EventEntry[]): void {
    this.#entries.push(...entries);
    if (this.#entries.length > LIMIT) this.#entries.splice(0, this.#entries.length - LIMIT);
  }

  /** What a rule matching `source` (every detail-type, every detail) has received so far. */
  receivedBy(source: string): readonly EventEntry[] {
    return this.#entries.filter((entry) => entry.Source === source);
  }
}
