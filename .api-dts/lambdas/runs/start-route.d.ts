import * as z from 'zod';
import type { AgentDefinition } from '../define.js';
import type { DecisionMac } from '../approvals/decision-mac.js';
import type { Identity } from '../approvals/policy.js';
import { type PriceTable } from '../models/prices.js';
import type { Clock } from '../shared/ports.js';
import type { BudgetCaps } from '../records/ledger-records.js';
/**
 * `POST /runs`: a run request as the client sends it — no `startedBy` (the caller is who the
 * transport proved) and no `migrate` (`savepoint migrate` names its operator itself) — and where
 * to start it: `stateMachineArn` (the state machine, its alias or one of its versions: an
 * unfinished run resumes on its own version) and the execution's name.
 */
export declare const StartRunBody: z.ZodObject<{
    runId: z.ZodOptional<z.ZodString>;
    input: z.ZodUnknown;
    config: z.ZodOptional<z.ZodObject<{
        maxSteps: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        maxTokens: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        maxDollars: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        maxWallSeconds: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        maxTokensPerTurn: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        onBudgetExceeded: z.ZodOptional<z.ZodDefault<z.ZodEnum<{
            ask: "ask";
            stop: "stop";
        }>>>;
        budgetExtensionPercent: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        approvalTimeoutSeconds: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
        historyEventsBeforeHandoff: z.ZodOptional<z.ZodDefault<z.ZodNumber>>;
    }, z.core.$strict>>;
    model: z.ZodOptional<z.ZodString>;
    force: z.ZodOptional<z.ZodBoolean>;
    fork: z.ZodOptional<z.ZodObject<{
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
    }, z.core.$strict>>;
    stateMachineArn: z.ZodOptional<z.ZodString>;
    executionName: z.ZodOptional<z.ZodString>;
}, z.core.$strict>;
export type StartRunBody = z.infer<typeof StartRunBody>;
export interface StartRouteDeps {
    agent: AgentDefinition;
    /** Signs the starter (the runs API alone may: a KMS key's `kms:GenerateMac`, a key file locally). */
    starterMac: DecisionMac;
    /** Where runs start unless the body names a version: the alias (`STATE_MACHINE_ARN`). */
    stateMachineArn: string;
    /** `StartExecution` on `stateMachineArn` (idempotent by name). */
    start(stateMachineArn: string, name: string, input: string): Promise<{
        executionArn: string;
    }>;
    clock: Clock;
    /** The deployment's ceilings on what a run request may ask for (runs/budget-caps.ts). @default none: the agent's */
    maxBudgets?: BudgetCaps;
    /** The deployment's prices (its overrides over the agent's over the built-in table), as StartRun has them. @default the agent's over the built-in table */
    prices?: PriceTable;
    /** The stack's model, which StartRun runs on unless the request names one (`MODEL`). */
    defaultModel?: string;
}
/**
 * Starts a run as `caller`: the request is checked as StartRun would (the run id, the agent's
 * input schema) so a bad one is a 400 here rather than a failed execution, then signed with its
 * starter (runs/starter.ts) and started.
 */
export declare function createStartRoute(deps: StartRouteDeps): (caller: Identity, body: unknown) => Promise<{
    runId: string;
    executionArn: string;
    startedBy: string;
}>;
