import * as z from 'zod';
import { type AgentDefinition } from '../define.js';
import type { BlobStore, GuardLedger, RunLedger, ToolCallLedger, TurnLedger } from '../ledger/ledger.js';
import { type BudgetCaps, type RunRecord } from '../records/ledger-records.js';
import { type PriceTable } from '../models/prices.js';
import type { Clock, Executions } from '../shared/ports.js';
import { type HistoryEstimate } from '../guards/history.js';
import type { DecisionMac } from '../approvals/decision-mac.js';
/**
 * What the state machine tells StartRun about itself in the Task's payload (infra/agent-state-machine.ts):
 * StartRun makes no Step Functions call to learn it (DescribeStateMachineForExecution refills 1/s
 * per account, and a start throttled before its run record exists would be lost).
 */
export declare const DefinitionFacts: z.ZodObject<{
    hash: z.ZodString;
    executionTimeoutSeconds: z.ZodOptional<z.ZodNumber>;
    approvalWaitSeconds: z.ZodOptional<z.ZodNumber>;
}, z.core.$strip>;
export type DefinitionFacts = z.infer<typeof DefinitionFacts>;
export declare const StartRunInput: z.ZodObject<{
    event: z.ZodUnknown;
    executionArn: z.ZodString;
    definition: z.ZodObject<{
        hash: z.ZodString;
        executionTimeoutSeconds: z.ZodOptional<z.ZodNumber>;
        approvalWaitSeconds: z.ZodOptional<z.ZodNumber>;
    }, z.core.$strip>;
}, z.core.$strip>;
/** `history`: where this execution's history estimate starts (lambdas/guards/history.ts), for the BudgetChecks after it. */
export type StartRunResult = {
    runId: string;
    action: 'start' | 'resume' | 'duplicate' | 'finished';
    status: RunRecord['status'];
    history?: HistoryEstimate;
};
export interface StartRunDeps {
    agent: AgentDefinition;
    ledger: RunLedger & Pick<TurnLedger, 'listConversation' | 'recordTurn'> & Pick<ToolCallLedger, 'recordCall'> & Pick<GuardLedger, 'countStep'> & BlobStore;
    executions: Pick<Executions, 'isRunning' | 'stop'>;
    clock: Clock;
    codeVersion: string;
    /** The stack's model (`DurableAgent`'s `model` prop), over the agent's. @default the agent's `model` */
    defaultModel?: string;
    /** @default DEFAULT_PRICE_TABLE */
    priceTable?: PriceTable;
    /** Verifies the runs API's signature of a run's starter (runs/starter.ts). @default none: no run request's starter is recorded */
    starterMac?: DecisionMac;
    /** The deployment's ceilings on what a run request may ask for (runs/budget-caps.ts). @default none: the agent's */
    maxBudgets?: BudgetCaps;
}
/**
 * Creates the run record once (the run id is the idempotency key of the whole run) or resumes the
 * run that has it. A run still driven by another live execution is left alone.
 */
export declare function createStartRun(deps: StartRunDeps): (input: unknown) => Promise<StartRunResult>;
/** What differs between the code a run started on and this code; empty when a resume is safe. */
export declare function codeChanges(run: RunRecord, fingerprint: string, definitionHash: string): string[];
