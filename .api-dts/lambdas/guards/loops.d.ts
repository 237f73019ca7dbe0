import type { LoopOptions } from '../define.js';
import type { TurnRecord } from '../records/ledger-records.js';
/**
 * Loop detection: a model stuck retrying the same call (the $412 retry spiral), cycling through a
 * few calls, or answering the same text again and again without calling a tool, is stopped (or
 * paused for a person) by the harness before the budget runs out. Each tool call is fingerprinted
 * by its name and normalized arguments, a text-only turn by its normalized text; the last
 * `window` turns are examined for repeats, the last few rounds of turns for cycles. The model is
 * warned in its next turn before any trip.
 */
export declare const LOOP: {
    readonly window: 5;
    readonly warnAt: 3;
    readonly repeats: 5;
    readonly cycleLength: 8;
    readonly onLoop: 'stop';
};
/** An agent's loop settings with the defaults filled in. */
export type LoopSettings = Required<LoopOptions>;
export declare function loopSettings(options: LoopOptions | undefined): LoopSettings;
export declare function callFingerprint(name: string, args: unknown): string;
export interface LoopVerdict {
    action: 'warn' | 'stop';
    reason: string;
}
/**
 * Examines the last turns: the same call (or the same text without a tool call) `warnAt` times in
 * the window warns the model (a note in its next turn), `repeats` times trips; a cycle of whole
 * turns of up to `cycleLength` (A→B→…→A→B→…) warns after two rounds and trips after three.
 * Turns up to `from` are not examined: a person let the run go on after a trip there.
 */
export declare function loopVerdict(all: TurnRecord[], settings?: LoopSettings, from?: number): LoopVerdict | undefined;
