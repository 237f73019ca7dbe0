import type { AggregateReservation } from './ledger.js';
import { type Current, type Step } from './protocol.js';
import type { AggregateRecord } from '../records/ledger-records.js';
/**
 * The ledger's rule for aggregates, in protocol.ts's shape: the amounts a tool moves per key,
 * reserved across the agent's runs before each call is sent (CallTool): the total with this call's amount must stay within `threshold` (absent: an approved
 * call, added whatever the total). The condition is the protocol's own — the item is still the one
 * read — so two runs reserving at once are serialized: the second reads the first's total.
 *
 *   run A: read total 0 ─► 0 + 300 ≤ 500 ─► put(total 300, IF_UNCHANGED) ✓ ─► send
 *   run B: read total 0 ─► 0 + 300 ≤ 500 ─► put(total 300, IF_UNCHANGED) ✗ (A wrote)
 *          read total 300 ─► 300 + 300 > 500 ─► keep: refused, nothing sent
 *
 * A holder that added already (a retried step, a takeover) adds nothing and is answered as
 * reserved. The newest AGGREGATE_HOLDERS_KEPT holders are kept: an older one retried would add again
 * (counting more, never less). A reservation is never given back: an amount the provider refused
 * still counts, so the total only grows and a refusal stands on every retry.
 */
export declare const AGGREGATE_HOLDERS_KEPT = 256;
export declare function reserveAggregate(current: Current<AggregateRecord>, reservation: {
    key: string;
    holder: string;
    amount: number;
    threshold?: number;
}, now: Date): Step<AggregateReservation>;
