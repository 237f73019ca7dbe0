import * as z from 'zod';
import { type AgentDefinition, type ToolDefinition } from '../define.js';
import type { BlobStore, GuardLedger, RunLedger, ToolCallLedger, TurnLedger } from '../ledger/ledger.js';
import { type ForkLineage, type RunRecord, type ToolCallRecord, type TurnRecord } from '../records/ledger-records.js';
/**
 * Forks: a new run whose first turns are its parent's, copied from the parent's ledger records
 * without any call, and which then goes on live — on this code, with the request's input and model
 * (the parent's, or edited ones), optionally with edited results of the last copied turn's calls.
 * Other code than the parent's continues the copied conversation only under the rule a migration
 * obeys (runs/versions.ts `continuationProblem`). StartRun copies the prefix (a fork on a deployed
 * stack is a StartExecution like any run):
 *
 *   createRun(fork, forkedFrom) ─► recordTurn / recordCall each copied turn and call (the first
 *   stands: a retried StartRun copies nothing twice) ─► countStep each copied step under the step
 *   key the steps count it by (the fork inherits what the parent spent) ─► recordFork on the parent
 *
 * Its writes after the fork point (`forkEffects`): `reuse` answers a write the parent already made
 * from the parent's record and sends nothing (the same business key, else the same tool and
 * arguments); the same key with other arguments is a hazard, refused to the model, never sent.
 * `dry` sends no write: the call is recorded as what it would have done, and a read the parent
 * made is answered from the parent's record (the counterfactual sees the day as the parent saw it).
 */
export declare const ForkRequest: z.ZodObject<{
    from: z.ZodString;
    at: z.ZodNumber;
    effects: z.ZodDefault<z.ZodEnum<{
        dry: "dry";
        reuse: "reuse";
    }>>;
    freshBudget: z.ZodOptional<z.ZodBoolean>;
    results: z.ZodOptional<z.ZodArray<z.ZodObject<{
        call: z.ZodNumber;
        result: z.ZodUnknown & z.ZodType<{} | null, unknown, z.core.$ZodTypeInternals<{} | null, unknown>>;
    }, z.core.$strict>>>;
}, z.core.$strict>;
export type ForkRequest = z.infer<typeof ForkRequest>;
/** The parent's turns and calls a fork at `at` copies: every turn before it, each with its completed calls. */
export declare function forkPrefix(parent: {
    run: RunRecord;
    turns: TurnRecord[];
    calls: ToolCallRecord[];
}, at: number): {
    turns: TurnRecord[];
    calls: ToolCallRecord[];
};
/** The step keys and amounts the steps count a turn and a call by (steps/call-model.ts, call-tool.ts, compact.ts). */
export declare function copiedSteps(prefix: {
    turns: TurnRecord[];
    calls: ToolCallRecord[];
}): {
    key: string;
    deltas: Record<string, number>;
}[];
/**
 * The prefix with the edits of `fork.results` applied: each named call of turn `at - 1` answered
 * with the edited result (an `ok` outcome), as the model will see it at the fork's first turn.
 */
export declare function editedPrefix(prefix: {
    turns: TurnRecord[];
    calls: ToolCallRecord[];
}, fork: Pick<ForkRequest, 'at' | 'results'>): {
    turns: TurnRecord[];
    calls: ToolCallRecord[];
};
/**
 * The fork's run record: the run StartRun drafted for this code, with the request's input and
 * model (what differs from the parent's is named in `edited`), the parent's budgets, and its
 * lineage. With `freshBudget`, each limit grows by what the copied steps spent, so the fork's own
 * work has all of it.
 */
export declare function forkRunRecord(draft: RunRecord, parent: RunRecord, fork: ForkRequest, prefix: {
    turns: TurnRecord[];
    calls: ToolCallRecord[];
}): RunRecord;
/**
 * Copies the prefix into the fork and seals the lineage on the parent; every write is idempotent, so
 * a retried StartRun repeats it safely. A result the parent stored by reference (ledger/blobs.ts)
 * is stored again under the fork (chunks are per run), read back and verified first; an edited
 * result too large for the call's item is stored by reference like any.
 */
export declare function copyPrefix(ledger: Pick<RunLedger, 'recordFork'> & Pick<TurnLedger, 'recordTurn'> & Pick<ToolCallLedger, 'recordCall'> & Pick<GuardLedger, 'countStep'> & BlobStore, fork: RunRecord, prefix: {
    turns: TurnRecord[];
    calls: ToolCallRecord[];
}, now: Date): Promise<void>;
/**
 * A fork resumed whose StartRun died while copying (the parent does not list it yet, `recordFork`
 * being the copy's last write): the copy is finished from the parent's records before the fork
 * goes on, so it never continues a conversation with turns missing. Its edited results were
 * written first; if the crash came before them, the edits are lost and the fork is refused.
 */
export declare function finishCopy(ledger: Parameters<typeof copyPrefix>[0] & Pick<RunLedger, 'getRun'> & Pick<TurnLedger, 'listConversation'>, fork: RunRecord, now: Date): Promise<void>;
/** What a fork's write is, against the parent's writes. */
export type WriteVerdict = {
    kind: 'reuse';
    parent: ToolCallRecord;
} | {
    kind: 'hazard';
    parent: ToolCallRecord;
    reason: string;
} | {
    kind: 'new';
};
/**
 * A write of a fork against the parent's completed writes: made before with the same business key
 * (else the same tool and arguments) → reuse its record; the same key with other arguments → a
 * hazard; otherwise new. Pure: the hazard report and the fork's CallTool both ask it.
 */
export declare function writeVerdict(tool: Pick<ToolDefinition, 'name'>, args: unknown, key: string | undefined, parentWrites: readonly (ToolCallRecord & {
    businessKey?: string;
})[]): WriteVerdict;
/**
 * The agent as a fork runs it: each `write` tool first asks the run's lineage. Not a fork: the
 * tool as it is. `dry`: nothing is sent; the result says what would have been done (and the
 * parent's reads answer the same reads). `reuse`: the
 * parent's recorded result for the same write, nothing sent; a hazard is answered to the model
 * as an error and never sent; a new write goes out. The definition's fingerprint is unchanged
 * (only `execute` differs).
 */
export declare function forkEffects<A extends AgentDefinition>(agent: A, ledger: Pick<RunLedger, 'getRun'> & Pick<TurnLedger, 'listConversation'>): A;
/**
 * What a fork at `at` may do to the world, before it goes live: the parent's writes from the fork
 * point on (a `reuse` fork answers each one it repeats with the same key or arguments from the
 * parent's record; any other write it makes is sent), or none for a `dry` fork; then what the fork
 * changes against its parent (`forkChanges`). Lines for a person.
 */
export declare function hazardReport(parentCalls: readonly ToolCallRecord[], fork: Pick<ForkRequest, 'from' | 'at' | 'effects'>, changes?: readonly string[]): string[];
/**
 * What a fork changes against its parent, in words: the code (its version, the system prompt, each
 * tool new, changed or gone — a new write tool's calls are all sent live in a `reuse` fork), the
 * input, the model, the edited results. Empty for a fork of the same run on the same code.
 */
export declare function forkChanges(parent: Pick<RunRecord, 'input' | 'model' | 'requestShape' | 'agentVersion'>, onto: {
    agent: Pick<AgentDefinition, 'system' | 'tools' | 'version'>;
    input: unknown;
    model?: string;
    fork: Pick<ForkRequest, 'at' | 'results'>;
}): string[];
/**
 * Whether a fork's completed write reached the outside: not a copied one (before the fork point),
 * not any of a dry fork's, and not one answered from the parent's record (the same tool and
 * arguments as a write the parent made). What a world's check of its own journal counts.
 */
export declare function forkSent(call: ToolCallRecord, lineage: ForkLineage, parentCalls: readonly ToolCallRecord[]): boolean;
