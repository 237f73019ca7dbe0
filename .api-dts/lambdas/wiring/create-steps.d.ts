import { type AgentDefinition } from '../define.js';
import type { CircuitBreaker } from '../guards/breaker.js';
import type { Ledger } from '../ledger/ledger.js';
import type { ApprovalRecord, BudgetCaps } from '../records/ledger-records.js';
import { type PriceOverrides, type PriceTable } from '../models/prices.js';
import type { ModelRegistry } from '../models/registry.js';
import { Steps, type StepName } from '../shared/steps.js';
import type { DecisionMac } from '../approvals/decision-mac.js';
import type { ApprovalNotifier, ApprovalRequested } from '../approvals/notify.js';
import type { ApprovalPolicy } from '../approvals/policy.js';
import type { ApprovalLinks } from '../approvals/decision.js';
import type { Clock, Executions, TaskCallbacks } from '../shared/ports.js';
import { type ExecutionStarter, type RecoveryPolicy } from '../steps/recover-run.js';
import { type ExecutionLookup } from '../steps/sweep.js';
import { type StateMachineVersions } from '../steps/prune-versions.js';
/**
 * What the steps of one agent need from the outside. The Lambda adapter (adapters/aws-deps.ts)
 * defines these as getters that build each client on first use, so a function builds only the
 * clients its step reads; the local runtime passes plain values.
 */
export interface HarnessDeps {
    readonly ledger: Ledger;
    /** The model clients, one per `provider:model-id`, built on first use. */
    readonly models: ModelRegistry;
    /** The stack's model, over the agent's (a run request may still name its own). */
    readonly defaultModel?: string;
    /** @default DEFAULT_PRICE_TABLE, with the agent's `prices` and the deployment's `prices` over it */
    readonly priceTable?: PriceTable;
    /**
     * The deployment's price overrides (`savepoint run --prices`, the construct's `prices`), over the
     * agent's own. @default none
     */
    readonly prices?: PriceOverrides;
    /** The deployment's ceilings on the budgets a run request may ask for (runs/budget-caps.ts). @default none: the agent's */
    readonly maxBudgets?: BudgetCaps;
    readonly clock: Clock;
    readonly breaker: CircuitBreaker;
    readonly callbacks: TaskCallbacks;
    readonly executions: Executions;
    readonly starter: ExecutionStarter;
    /** How long a claim protects an in-flight tool call; at least the Lambda's timeout. */
    readonly leaseMs: number;
    /** Recorded in every run's fingerprint. */
    readonly codeVersion: string;
    readonly recoveryPolicy?: RecoveryPolicy;
    /** The environment the agent's `deps` are built from (once, on the first tool call). */
    readonly agentEnv: Readonly<Record<string, string | undefined>>;
    /** The fetch the agent's `deps` give their clients. @default the global fetch */
    readonly agentFetch?: typeof fetch;
    /** A new approval waits for a person. */
    readonly notify?: (approval: ApprovalRecord, event: ApprovalRequested) => void;
    /** How approvers are told and authenticated, how decisions are signed, and the policy (approvals/). */
    readonly approvals?: ApprovalSetup;
    /** How executions ended (`DescribeExecution`): the sweeper's, on AWS only. */
    readonly lookup?: ExecutionLookup;
    /** The state machine's versions, for the version pruner. */
    readonly versions?: StateMachineVersions;
    /** Versions the pruner keeps whatever else holds. @default DEFAULT_KEEP_VERSIONS */
    readonly keepVersions?: number;
}
/** The approval machinery a deployment sets up (absent: no links, no events, decisions unsigned). */
export interface ApprovalSetup {
    readonly notifier?: ApprovalNotifier;
    readonly links?: ApprovalLinks;
    readonly decisionMac?: DecisionMac;
    /** Verifies (StartRun) or signs (the runs API) who started a run (runs/starter.ts). */
    readonly starterMac?: DecisionMac;
    readonly policy?: ApprovalPolicy;
}
export type StepFn = (event: unknown, signal?: AbortSignal) => Promise<unknown>;
/** The steps a Task state or an event rule invokes (the approval API and the runs API have their own adapters). */
export type AgentSteps = Record<Exclude<StepName, typeof Steps.ApprovalCallback | typeof Steps.RunsApi>, StepFn>;
/**
 * The steps of one agent, wired once for both engines. Each step is built on its first call:
 * its dependencies are read then, not before.
 */
export declare function createSteps(defined: AgentDefinition, deps: HarnessDeps): AgentSteps;
