import { executionChain } from '../guards/history.js';
import { type AgentDefinition, type Guarantee } from '../define.js';
import type { Ledger } from '../ledger/ledger.js';
import { type GuardFigures } from '../guards/budgets.js';
import type { ApprovalRecord, GuardEvent, KillFlag, MigrationRecord, RecoveryRecord, RunRecord, ToolCallRecord, TurnRecord } from '../records/ledger-records.js';
/** What a run did, computed from its ledger records (never from what the model claims it did). */
export interface RunReport {
    runId: string;
    agent: string;
    input: unknown;
    status: RunRecord['status'];
    /** The run's model (`provider:model-id`). */
    model: string;
    /** Model turns by the model that answered them: the run's model, and its fallback while the model was down. */
    turnsByModel: Record<string, number>;
    stopReason?: string;
    error?: {
        error: string;
        cause: string;
    };
    steps: number;
    modelTurns: number;
    toolCalls: number;
    tokens: {
        input: number;
        output: number;
        cachedInput: number;
        total: number;
    };
    dollars: number;
    /** Per tool: how its calls ended, and how far its side effect is guaranteed to happen once. */
    tools: Record<string, ToolFigures>;
    /** The agent's own summary (`AgentDefinition.report`), when the agent is known. A dry fork's counts no write it did not send. */
    summary?: Readonly<Record<string, number | string>>;
    /**
     * A dry fork's counterfactual (lambdas/runs/fork.ts): the agent's summary with the writes it
     * would have made counted as made — beside `summary`, which counts only what was sent.
     */
    wouldHave?: Readonly<Record<string, number | string>>;
    /**
     * `approved` counts only decisions the harness applied: an approval recorded as approved whose
     * signature did not verify (its call refused with `approval_unverified`) is `unverified`.
     */
    approvals: {
        total: number;
        approved: number;
        rejected: number;
        expired: number;
        pending: number;
        unverified: number;
    };
    inFlight: number;
    /** Each guard's figures (used / limit), and every warning or stop, in order. */
    guards: GuardFigures;
    guardEvents: GuardEvent[];
    killed?: KillFlag;
    /** Executions that drove the run: the first, plus one per resume or recovery. */
    executions: number;
    /** The executions in order, each with how it got the run: started it, a handoff (continue-as-new), a resume or recovery. */
    chain: ReturnType<typeof executionChain>;
    /** The run's automatic recoveries, if any (lambdas/steps/recover-run.ts). */
    recovery?: RecoveryRecord;
    createdAt: string;
    finishedAt?: string;
    wallSeconds: number;
    /**
     * The code the run is bound to (its agent version and fingerprint), the model turns each
     * fingerprint recorded (a run that finished on its version shows one), and its migrations.
     */
    version: {
        agentVersion?: string;
        fingerprint: string;
        turnsByFingerprint: Record<string, number>;
        migrations: MigrationRecord[];
    };
}
export interface ToolFigures {
    calls: number;
    ok: number;
    error: number;
    rejected: number;
    expired: number;
    inFlight: number;
    guarantee: Guarantee;
    /** The condition the guarantee holds under (define/tool.ts `guaranteeCondition`), when the agent's code is known. */
    condition?: string;
}
export declare function buildReport(agent: AgentDefinition | undefined, { run, calls, approvals, turns }: {
    run: RunRecord;
    calls: ToolCallRecord[];
    approvals: ApprovalRecord[];
    turns?: TurnRecord[];
}, now: Date): RunReport;
export declare function loadReport(ledger: Ledger, runId: string, now: Date, agent?: AgentDefinition): Promise<RunReport | undefined>;
