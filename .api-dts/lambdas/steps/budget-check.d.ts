import * as z from 'zod';
import type { AgentDefinition } from '../define.js';
import { type DecisionMac } from '../approvals/decision-mac.js';
import { type Reservation } from '../guards/budgets.js';
import type { PriceTable } from '../models/prices.js';
import { HistoryEstimate, type ExecutionHistory } from '../guards/history.js';
import type { ApprovalLedger, BlobStore, GuardLedger, TurnLedger } from '../ledger/ledger.js';
import { type ApprovalRecord, type BudgetGuard, type GuardEvent, type RunRecord, type ToolCallRecord, type TurnRecord } from '../records/ledger-records.js';
import type { Clock } from '../shared/ports.js';
import { type ToolCallItem } from '../conversation/tool-calls.js';
import { type CodeFingerprint } from '../runs/versions.js';
/** `history`: what this execution last knew of its history (lambdas/guards/history.ts, countIfDue). */
export declare const BudgetCheckInput: z.ZodObject<{
    runId: z.ZodString;
    history: z.ZodOptional<z.ZodObject<{
        events: z.ZodNumber;
        steps: z.ZodNumber;
        checks: z.ZodNumber;
    }, z.core.$strip>>;
}, z.core.$strip>;
export type BudgetDecision = 
/** `pending`: the last turn's tool calls that never completed (a resumed run) come first, in call order. */
{
    continue: true;
    nextTurn: number;
    pending: ToolCallItem[] | null;
    /** Set when this execution is near its history limit: it hands the run to a successor (continue-as-new). */
    /** `events`: counted, or (`unchecked`) the most there can be, when the count was throttled. */
    handoff?: {
        events: number;
        threshold: number;
        unchecked?: true;
    };
    /** Set when the context passed its share of the window: a Compact step runs before turn `turn`. */
    compact?: {
        turn: number;
        covers: number;
    };
    /** A guard warned (e.g. a loop forming). */
    warning?: string;
} | {
    continue: false;
    status: 'succeeded' | 'stopped' | 'killed';
    reason: string;
    guard?: GuardEvent['guard'];
    /** Set when the run asks a person to extend the exhausted budget instead of stopping. */
    extension?: NonNullable<ApprovalRecord['budget']>;
};
/**
 * The harness's stop decision, made between iterations from what is persisted — never from what
 * the model says: the run's status, the kill switches, the budgets, whether the model's last turn
 * was final, and the loop detector. `also`: the global kill flag, the run's tool calls (for a turn's
 * unfinished calls) and the next model call's reservation, when known.
 */
export declare function decide(agent: AgentDefinition, run: RunRecord, turns: TurnRecord[], now: Date, { globalKill, calls, reserve }?: {
    globalKill?: RunRecord['killed'];
    calls?: ToolCallRecord[];
    reserve?: () => Reservation | undefined;
}): BudgetDecision;
export declare function createBudgetCheck(deps: {
    agent: AgentDefinition;
    fingerprint: CodeFingerprint;
    ledger: TurnLedger & BlobStore & GuardLedger & Pick<ApprovalLedger, 'getBudgetApproval'>;
    clock: Clock;
    decisionMac?: DecisionMac;
    history?: ExecutionHistory;
    priceTable?: PriceTable;
}): (input: unknown) => Promise<BudgetDecision & {
    history?: HistoryEstimate;
}>;
export declare function extendedLimit(run: RunRecord, guard: BudgetGuard): number;
