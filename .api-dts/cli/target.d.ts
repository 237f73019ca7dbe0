import { type SavepointClient } from '../client/index.js';
import type { AgentDefinition } from '../lambdas/define.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import { type EngineFile } from './state.js';
/** What a command works on: the agent, the ledger, a client of the local state directory or the deployed stack. */
/**
 * The agent a command names, else the one the running engine runs (`engine`: the caller's view of
 * it, when it holds the state directory already), else the one that ran the run in question.
 */
export declare function agentFor(explicit: string | undefined, runAgent?: string, engine?: EngineFile | null): Promise<AgentDefinition | undefined>;
/** What a command works on: a client, the ledger behind it, and whether decisions reach a live execution at once. */
export interface Target {
    client: SavepointClient;
    ledger: Ledger;
    live: boolean;
    /** The running local engine, when the command reaches one. */
    engine?: EngineFile;
    /** A link to watch an execution (the AWS console's, on a deployed stack). */
    link: (executionArn: string) => string;
}
/**
 * Runs `use` with a client of the deployed stack (`--stack`), or of the state directory: there,
 * decisions go through the running engine's approval API (the waiting execution resumes), or,
 * with no engine running, are recorded in the ledger and delivered when the run resumes.
 */
export declare function withClient<T>(command: string, agentSpec: string | undefined, runId: string | undefined, use: (target: Target) => Promise<T>): Promise<T>;
/** Where the ledger is, for messages: the stack, or the state directory. */
export declare const where: () => string;
