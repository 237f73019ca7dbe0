import type { GuardEvent, KillFlag, RunRecord } from '../records/ledger-records.js';
import { usd, type Spent } from '../records/guards.js';
import type { Price } from '../models/prices.js';
/** Why the harness stops a run, and the figures it read. */
export interface GuardTrip {
    guard: GuardEvent['guard'];
    reason: string;
}
export interface GuardFigures {
    steps: {
        used: number;
        limit: number;
    };
    tokens: {
        used: number;
        limit: number;
        perTurn: number;
    };
    dollars: {
        used: number;
        limit: number;
    };
    /** The run's own time: since it first started, less the time it waited for people. */
    wallSeconds: {
        used: number;
        limit: number;
    };
    /** Time waiting for decisions: bounded by each approval's own timeout, not by the wall-clock budget. */
    approvalWaitSeconds: number;
}
export declare function dollarsOf(run: Pick<RunRecord, 'costMicros'>): number;
export { usd };
/** What the run has spent, from its counters (records/guards.ts). */
export declare function spentBy(run: Pick<RunRecord, 'steps' | 'inputTokens' | 'outputTokens' | 'costMicros'>): Spent;
/** Each budget's used and limit (its row's `figure`), the time waiting for people besides. */
export declare function guardFigures(run: RunRecord, now: Date): GuardFigures;
/**
 * When the run's wall-clock budget runs out, as things stand (a later wait for a person moves it
 * on): the moment `budgetTrip` starts answering `wallClock`. A call in flight is cut off then.
 */
export declare function wallClockEnd(run: Pick<RunRecord, 'createdAt' | 'approvalWaitMs' | 'config'>): Date;
/**
 * The hard caps, checked before every step from persisted state. Steps and wall clock are known
 * before the next call, so the run stops before a call would exceed them; tokens and dollars are
 * only known after a call, so the run stops right after the call that crossed them.
 */
export declare function budgetTrip(run: RunRecord, now: Date, globalKill?: KillFlag): GuardTrip | undefined;
/** The soft cap: what is left, offered to the model each turn. The harness counter stays the hard cap. */
export declare function budgetHint(run: RunRecord, now: Date): string;
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
export declare const FRAMING_TOKENS = 1000;
/** Bytes the harness's notes of a turn may add to a request (the budget hint, a loop warning). */
export declare const NOTES_BYTES = 1024;
/**
 * A true upper bound of a call's cost. No tokenizer turns a byte into more than one token, so the
 * request's UTF-8 bytes (JSON: quotes and keys included, an over-estimate) bound its input tokens;
 * every input token is priced at the dearest of plain input, cache writes and cache reads, and
 * `max_tokens` of output at the output price, for each model that may answer (the fallback too).
 */
export declare function reservationFor(requestBytes: number, maxTokens: number, prices: readonly Price[]): Reservation;
/** The token or dollar budget a call of `reservation` would not fit in, before it is sent. */
export declare function reservationTrip(run: RunRecord, reservation: Reservation): GuardTrip | undefined;
