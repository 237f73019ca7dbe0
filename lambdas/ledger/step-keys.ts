import type { Counters } from '../records/ledger-records.js';

/**
 * The keys a run's steps are counted by, each once (ledger/protocol.ts `countStep`): a model call's
 * reservation and its recorded turn, a tool call's step. A run item's window of counted keys holds
 * them (counted-steps.ts).
 */

/** The key a tool call's step is counted by (once per call, whichever write counts it). */
export const callStepKey = (turn: number, call: number) => `call:${turn}:${call}`;

/** The keys a model call is counted by, once each: its reservation before it is sent, then its recorded turn. */
export const modelCallKeys = (turn: number) => ({ reserve: `reserve:${turn}`, turn: `turn:${turn}` });

/** The turn a model call's reservation key (`modelCallKeys(turn).reserve`) is for; undefined for any other key. */
export function reservedTurnOf(key: string): number | undefined {
  const match = /^reserve:(\d+)$/.exec(key);
  return match ? Number(match[1]) : undefined;
}

/** What a tool call adds to the run's counters. */
export const CALL_DELTAS = { steps: 1, toolCalls: 1 } as const satisfies Partial<Counters>;
