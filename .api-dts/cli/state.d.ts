import { z } from 'zod';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { CfnTemplateJson } from '../local/template/asl.js';
import { type LedgerKind } from '../local/state/ledger-files.js';
export declare const DEFAULT_STATE_DIR = ".savepoint";
/**
 * While `savepoint run` drives the local engine it owns the state directory (only one process may
 * open the on-disk DynamoDB; cli/owner.ts) and publishes its loopback endpoints here, with the
 * nonce of its lock; other commands reach it through them, or own the state directory themselves
 * while no engine runs.
 */
declare const EngineFile: z.ZodObject<{
    pid: z.ZodNumber;
    nonce: z.ZodOptional<z.ZodString>;
    startedAt: z.ZodString;
    agent: z.ZodOptional<z.ZodObject<{
        name: z.ZodString;
        module: z.ZodString;
    }, z.core.$strip>>;
    endpoints: z.ZodObject<{
        ledger: z.ZodOptional<z.ZodString>;
        dynamodb: z.ZodOptional<z.ZodString>;
        sfn: z.ZodString;
        approvals: z.ZodString;
        model: z.ZodString;
    }, z.core.$catchall<z.ZodString>>;
}, z.core.$strip>;
export type EngineFile = z.infer<typeof EngineFile>;
/** Writes engine.json whole (a reader never sees half of it); the returned function removes it if it is still ours. */
export declare function publishEngine(stateDir: string, engine: EngineFile): () => void;
/**
 * The engine running on this state directory: the one named by engine.json while the lock it was
 * published with is live. Undefined when nobody owns the directory (a stale engine.json or lock,
 * e.g. naming a dead pid or a live unrelated one, is not obeyed). A UsageError when another
 * command owns it, or engine.json is damaged.
 */
export declare function runningEngine(stateDir: string): Promise<EngineFile | undefined>;
/** Records where `name` was loaded from (a run of it starting here). */
export declare function rememberAgentModule(stateDir: string, name: string, module: string): void;
/** The module `name` last ran from here, if it is still there. */
export declare function rememberedAgentModule(stateDir: string, name: string): string | undefined;
/** An open ledger: through the running engine's endpoint (`engine`), or owned and opened here. */
export interface OpenLedger {
    ledger: Ledger;
    engine?: EngineFile;
    close: () => Promise<void>;
}
/**
 * How a command opens an embedded ledger: `write` whole (EmbeddedLedger.open); `read` from its
 * index, read-only, in time and memory flat in the number of runs it holds; `verify` read-only
 * too, after streaming the whole log, every line's chain and seal checked (EmbeddedLedger.openToRead).
 */
export type LedgerAccess = 'write' | 'read' | 'verify';
/** The state directory's ledger: through the running engine's endpoint, or opened directly (an embedded one as `access` says). */
export declare function openLedger(stateDir: string, command?: string, access?: LedgerAccess): Promise<OpenLedger>;
/**
 * The kind of ledger a state directory holds: `ledger.jsonl` (embedded) or `ledger/` (dynalite);
 * undefined when none. Both at once is refused: which runs are meant would be a guess.
 */
export declare function ledgerKindOf(stateDir: string): LedgerKind | undefined;
/**
 * The ledger `savepoint run` uses: the one asked for, else the one the state directory holds,
 * else embedded. Asking for another kind than the directory holds is refused (its runs would vanish from view).
 */
export declare function chooseLedger(stateDir: string | undefined, asked: LedgerKind | undefined): LedgerKind;
/**
 * The data file the agent's simulated world serves (e.g. the refund reconciler's day) is part of a
 * state directory's outside world, like the world's journal next to it: a run keeps a copy there,
 * and a resume without `--world-data` serves the same data again.
 */
export declare function worldDataOf(stateDir: string | undefined, explicit: string | undefined): {
    path: string | undefined;
    keep: () => void;
};
/** A synthesized CloudFormation template, as `cdk synth` writes it; a file that is not one is a usage error naming it. */
export declare function loadTemplate(path: string): CfnTemplateJson;
export {};
