import { InvalidInputError } from '../../lambdas/shared/errors.js';
import { type AgentDefinition } from '../../lambdas/define.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { CfnTemplateJson } from '../template/asl.js';
import { type Divergence } from './answers.js';
export type { Divergence } from './answers.js';
export { loadRecording, type Recording } from './recording.js';
/**
 * `savepoint replay`: a finished or stopped run re-executed on this code with no live call. The
 * synthesized definition runs on the local engine over an in-memory ledger, as any local run does;
 * only what is outside the harness is answered from the recording — each model turn by its
 * recorded response (answers.ts `recordedModel`), each tool call by its recorded result
 * (`recordedTools`), each approval by its recorded decision, the clock by the recorded times
 * (recording.ts `recordedClock`). What the harness decides on its own is compared as it happens:
 * each request to the model, each tool call's name, arguments and key, each approval asked for;
 * then the guard events, the run's outcome and the agent's report. The first difference is the
 * divergence; none, and the replay is identical.
 */
export interface ReplayOptions {
    /** This code: the agent whose handlers the replay runs. */
    readonly agent: AgentDefinition<any, any, any>;
    /** The ledger that recorded the run (a state directory's, or a deployed stack's). */
    readonly source: Ledger;
    readonly runId: string;
    /** The synthesized template. @default the cached one for the agent (local/template/cache.ts) */
    readonly template?: CfnTemplateJson;
    readonly log?: (line: string) => void;
}
export interface ReplayResult {
    runId: string;
    identical: boolean;
    divergence?: Divergence;
    /** Turns and tool calls the replay answered from the recording. */
    answered: {
        turns: number;
        toolCalls: number;
        approvals: number;
    };
    /** Calls that left the process: always 0 (the replay has no provider client, and its model server counts). */
    live: {
        model: number;
        tools: number;
    };
    /** What the replay took, and what the recorded run took from its start to its end. */
    wallMs: number;
    /** Of `wallMs`, starting the local stack the replay runs on (the engine, its endpoints). */
    stackMs: number;
    recordedWallMs: number;
}
export declare function replayRun(options: ReplayOptions): Promise<ReplayResult>;
/** A replay asked of what cannot be replayed (no such run, a run still running): invalid input, never a divergence. */
export declare class ReplayRefusedError extends InvalidInputError {
}
