import type { GuardEvent, KillFlag, RunRecord } from '../records/ledger-records.js';
import { COUNTED_GUARDS, GUARDS, spentOf, usd, type Spent } from '../records/guards.js';
import type { Price } from '../models/prices.js';

/** Why the harness stops a run, and the figures it read. */
export interface GuardTrip {
  guard: GuardEvent['guard'];
  reason: string;
}

export interface GuardFigures {
  steps: { used: number; limit: number };
  tokens: { used: number; limit: number; perTurn: number };
  dollars: { used: number; limit: number };
  /** The run's own time: since it first started, less the time it waited for people. */
  wallSeconds: { used: number; limit: number };
  /** Time waiting for decisions: bounded by each approval's own timeout, not by the wall-clock budget. */
  approvalWaitSeconds: number;
}

export function dollarsOf(run: Pick<RunRecord, 'costMicros'>): number {
  return run.costMicros / 1_000_000;
}

export { usd };

/** What the run has spent, from its counters (records/guards.ts). */
export function spentBy(run: Pick<RunRecord, 'steps' | 'inputTokens' | 'outputTokens' | 'costMicros'>): Spent {
  return { steps: run.steps, tokens: run.inputTokens + run.outputTokens, micros: run.costMicros };
}

/**
 * Each budget's used and limit (its row's `figure`), the time waiting for people besides.
 * `pendingWaitMs`: how long approvals not yet decided have waited (approvals/waits.ts), which a
 * report counts as waiting, not as the run's own time, before a decision counts it into the run.
 */
export function guardFigures(run: RunRecord, now: Date, pendingWaitMs = 0): GuardFigures {
  const { config } = run;
  const waitMs = (run.approvalWaitMs ?? 0) + pendingWaitMs;
  const spent = spentBy(run);
  // Asked several times a step: built in place, not from an array of entries.
  const counted: Record<string, GuardFigures['tokens'] | GuardFigures['steps']> = {};
  for (const row of COUNTED_GUARDS) counted[row.figure] = row.guard === 'tokens' ? { used: spentOf(row, spent), limit: config[row.field], perTurn: config.maxTokensPerTurn } : { used: spentOf(row, spent), limit: config[row.field] };
  return {
    ...(counted as Pick<GuardFigures, 'steps' | 'tokens' | 'dollars'>),
    // Since the run FIRST started (a resume carries the original createdAt), less the waits for
    // people: waiting for a person is not work.
    wallSeconds: { used: Math.max(0, Math.floor((now.getTime() - Date.parse(run.createdAt) - waitMs) / 1000)), limit: config.maxWallSeconds },
    approvalWaitSeconds: Math.floor(waitMs / 1000),
  };
}

/**
 * When the run's wall-clock budget runs out, as things stand (a later wait for a person moves it
 * on): the moment `budgetTrip` starts answering `wallClock`. A call in flight is cut off then.
 */
export function wallClockEnd(run: Pick<RunRecord, 'createdAt' | 'approvalWaitMs' | 'config'>): Date {
  return new Date(Date.parse(run.createdAt) + (run.approvalWaitMs ?? 0) + run.config.maxWallSeconds * 1000);
}

const ALL_RUNS = ' (all runs)';
const killReason = (flag: KillFlag, scope: string) => `killed${scope} by ${flag.by} at ${flag.at}${flag.reason ? `: ${flag.reason}` : ''}`;

/**
 * The kill flag of all runs that stopped a run, from the reason the run recorded (`budgetTrip`'s):
 * the run's own record keeps no copy of the global flag (replay sets it again: local/replay).
 * Undefined for any other reason.
 */
export function globalKillOf(stopReason: string): KillFlag | undefined {
  const match = /^killed \(all runs\) by (\S+) at (\S+?)(?:: ([\s\S]*))?$/.exec(stopReason);
  return match ? { by: match[1]!, at: match[2]!, reason: match[3] ?? '' } : undefined;
}

/** The order the caps are checked in: the measured budgets (the wall clock) first, then the counted ones, each in its row's order. */
const TRIP_ORDER = [...GUARDS.filter((row) => !('counted' in row)), ...COUNTED_GUARDS];

/**
 * The hard caps, checked before every step from persisted state. Steps and wall clock are known
 * before the next call, so the run stops before a call would exceed them; tokens and dollars are
 * only known after a call, so the run stops right after the call that crossed them.
 */
export function budgetTrip(run: RunRecord, now: Date, globalKill?: KillFlag): GuardTrip | undefined {
  if (run.killed) return { guard: 'kill', reason: killReason(run.killed, '') };
  if (globalKill) return { guard: 'kill', reason: killReason(globalKill, ALL_RUNS) };
  // The fleet budget refused a call of the run (guards/fleet.ts), which recorded it: the run stops.
  const fleet = run.guardEvents?.find((event) => event.guard === 'fleet' && event.action === 'stopped');
  if (fleet) return { guard: 'fleet', reason: fleet.reason };
  const figures = guardFigures(run, now);
  for (const row of TRIP_ORDER) {
    const { used, limit } = figures[row.figure];
    if (used >= limit) return { guard: row.guard, reason: `budget exceeded: ${row.label} ${row.show(used)} / ${row.show(limit)}` };
  }
  return undefined;
}

/** The soft cap: what is left, offered to the model each turn. The harness counter stays the hard cap. */
export function budgetHint(run: RunRecord, now: Date): string {
  const f = guardFigures(run, now);
  const minutes = Math.max(0, Math.floor((f.wallSeconds.limit - f.wallSeconds.used) / 60));
  return (
    `Budget left for this run: ${Math.max(0, f.steps.limit - f.steps.used)} steps, ` +
    `${Math.max(0, f.tokens.limit - f.tokens.used)} tokens, $${Math.max(0, f.dollars.limit - f.dollars.used).toFixed(2)}, ` +
    `${minutes} min. Finish within it.`
  );
}

/**
 * The most one model call can cost, reserved before it is sent: a call that does not fit in what
 * is left of the token and dollar budgets is not sent, so one turn cannot blow them (a multi-MB
 * tool result in the conversation included).
 */
export interface Reservation {
  /** Input and output tokens. */
  readonly tokens: number;
  /** Dollars × 1e6. */
  readonly micros: number;
}

/**
 * Tokens a provider adds to what is sent (its tool-use system prompt, message framing): a few
 * hundred on the providers' own accounts, bounded generously.
 */
export const FRAMING_TOKENS = 1_000;
/** Bytes the harness's notes of a turn may add to a request (the budget hint, a loop warning). */
export const NOTES_BYTES = 1_024;

/**
 * A true upper bound of a call's cost. No tokenizer turns a byte into more than one token, so the
 * request's UTF-8 bytes (JSON: quotes and keys included, an over-estimate) bound its input tokens;
 * every input token is priced at the dearest of plain input, cache writes and cache reads, and
 * `max_tokens` of output at the output price, for each model that may answer (the fallback too).
 */
export function reservationFor(requestBytes: number, maxTokens: number, prices: readonly Price[]): Reservation {
  const input = requestBytes + NOTES_BYTES + FRAMING_TOKENS;
  const micros = Math.max(...prices.map((price) => input * Math.max(price.inputPerMTok, price.cacheWritePerMTok, price.cacheReadPerMTok) + maxTokens * price.outputPerMTok));
  return { tokens: input + maxTokens, micros: Math.ceil(micros) };
}

/**
 * How to raise the limit a reservation did not fit in: the run's setting, and — the request being
 * the whole conversation, re-sent each turn — the tool setting that holds large results down.
 */
const RAISE = {
  tokens: " (raise the run's maxTokens, or give tools with large results a maxResultTokens)",
  dollars: " (raise the run's maxDollars, or give tools with large results a maxResultTokens)",
} as const;

/** The token or dollar budget a call of `reservation` would not fit in, before it is sent. */
export function reservationTrip(run: RunRecord, reservation: Reservation): GuardTrip | undefined {
  const tokens = { used: run.inputTokens + run.outputTokens, limit: run.config.maxTokens };
  if (tokens.used + reservation.tokens > tokens.limit) {
    return { guard: 'tokens', reason: `budget exceeded: tokens ${tokens.used} / ${tokens.limit}, and the next model call may use up to ${reservation.tokens}${RAISE.tokens}` };
  }
  if (run.costMicros + reservation.micros > Math.round(run.config.maxDollars * 1_000_000)) {
    return {
      guard: 'dollars',
      reason: `budget exceeded: dollars ${usd(dollarsOf(run))} / ${usd(run.config.maxDollars)}, and the next model call may cost up to ${usd(reservation.micros / 1_000_000)}${RAISE.dollars}`,
    };
  }
  return undefined;
}
