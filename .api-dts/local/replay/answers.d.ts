import type { ModelClient } from '../../lambdas/records/messages.js';
import type { AgentDefinition } from '../../lambdas/define.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import { TerminalError } from '../../lambdas/shared/errors.js';
import { type Recording } from './recording.js';
/**
 * The recorded model and the recorded tools of a replay: each call the harness makes is compared
 * with what the recording says the harness asked then, and answered with what came back then.
 * Nothing here reaches a model or a provider. The first call that differs is the divergence; it is
 * noted and the call refused, which ends the replayed execution there.
 */
/** Where a replay first did something other than the recorded run did. */
export interface Divergence {
    turn: number;
    /** The tool call of the turn, when it diverged there. */
    call?: number;
    /** What was compared: `model request`, `tool call`, `approval`, `guards`, `report`, `outcome`. */
    what: string;
    recorded: string;
    produced: string;
    /** Why, in words: `the system prompt changed`, `the arguments changed`. */
    why: string;
}
/** Refuses the call that diverged: not retried (its name is not transient), so the execution ends. */
export declare class ReplayDivergedError extends TerminalError {
}
export interface Referee {
    /** The first divergence, once there is one. */
    readonly divergence: Divergence | undefined;
    diverged(divergence: Divergence): never;
}
export declare function referee(): Referee;
/**
 * The part of two long texts where they first differ, the same window of each: a little of what
 * they share before it, then up to `max` characters from there. Two texts that share their first
 * 240 characters show what differs, not the same start twice.
 */
export declare function differingPart(recorded: string, produced: string, max?: number): {
    recorded: string;
    produced: string;
};
/**
 * Answers the n-th model call with recorded turn n, after a fork's `copied` turns (calls come one at a time, in turn order:
 * counting them finds the turn even after a compaction). Before answering, the request is checked
 * against the request the recording implies: its conversation rebuilt from the recorded turns and
 * results, with the turn's recorded notes; the system prompt and tools against the digests on the
 * run record; the model and `max_tokens`.
 */
export declare function recordedModel(recording: Recording, agent: AgentDefinition, judge: Referee, copied?: number): {
    client: ModelClient;
    calls: () => number;
};
/**
 * The agent with each tool answered from the recording: the same names, schemas, effects and
 * approval rules (so its fingerprint is the same), but `execute` compares the call with the
 * recorded one (name, arguments, idempotency key) and returns the recorded result, or throws the
 * error the recorded outcome came from. No `deps`: no provider client is even built.
 */
export declare function recordedTools<A extends AgentDefinition>(agent: A, recording: Recording, judge: Referee, askedFor: (turn: number, call: number) => boolean): A & {
    toolCalls: () => number;
};
/** The recorded decision for an approval the replay is asked for, as the approval API takes it. */
export declare function recordedDecision(approval: ApprovalRecord | undefined): {
    decision: 'approve' | 'reject';
    reason?: string;
} | 'expire' | undefined;
