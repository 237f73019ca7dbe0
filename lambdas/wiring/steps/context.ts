import type { AgentDefinition } from '../../define.js';
import type { CircuitBreaker } from '../../guards/breaker.js';
import { meteredStep } from '../../guards/history.js';
import type { Ledger } from '../../ledger/ledger.js';
import type { ApprovalRecord, BudgetCaps } from '../../records/ledger-records.js';
import type { FleetBudget } from '../../records/fleet.js';
import { deploymentPrices, type PriceOverrides, type PriceTable } from '../../models/prices.js';
import type { ModelRegistry } from '../../models/registry.js';
import type { Steps, StepName } from '../../shared/steps.js';
import type { DecisionMac } from '../../approvals/decision-mac.js';
import type { ApprovalNotifier, ApprovalRequested } from '../../approvals/notify.js';
import type { ApprovalPolicy } from '../../approvals/policy.js';
import type { ApprovalLinks } from '../../approvals/decision.js';
import type { ToolSecrets } from '../../tools/secrets.js';
import type { ChildStarter } from '../../tools/child-runs.js';
import type { Clock, Executions, TaskCallbacks } from '../../shared/ports.js';
import type { ExecutionStarter, RecoveryPolicy } from '../../steps/recover-run.js';
import type { ExecutionLookup } from '../../steps/sweep.js';
import type { StateMachineVersions } from '../../steps/prune-versions.js';
import { codeFingerprint, type CodeFingerprint } from '../../runs/versions.js';
import { withAgentDeps } from '../../conversation/turns.js';

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
  /**
   * The deployment's fleet budget: dollars per day and runs at once, per agent and per stack
   * (records/fleet.ts), each model call reserved within it. @default none
   */
  readonly fleetBudget?: FleetBudget;
  readonly clock: Clock;
  readonly breaker: CircuitBreaker;
  readonly callbacks: TaskCallbacks;
  readonly executions: Executions;
  readonly starter: ExecutionStarter;
  /** How long a claim protects an in-flight tool call; at least the Lambda's timeout. */
  readonly leaseMs: number;
  /** Recorded in every run's fingerprint. */
  readonly codeVersion: string;
  /**
   * This code's fingerprint (runs/versions.ts `codeFingerprint` of the agent, `codeVersion` and the
   * price table), when the caller has it: a replay builds the steps of each function of one agent,
   * and hashes its tool schemas once, not once per function. @default made from them
   */
  readonly fingerprint?: CodeFingerprint;
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
  /** The tool credentials CallTool serves its tools (`context.secret`: tools/secrets.ts). @default none */
  readonly toolSecrets?: ToolSecrets;
  /** Where CallTool tells of a tool's own failure, with its stack (CallToolDeps `onToolFailure`): the operator's log. @default none */
  readonly onToolFailure?: (tool: string, error: unknown) => void;
  /** Starts the child runs of the agent's agent tools (CallTool's, tools/child-runs.ts), and stops them when their parent is killed (ExecutionStopped's, the runs API's). @default none */
  readonly children?: ChildStarter;
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

/** The steps a Task state or an event rule invokes (the approval API and the runs API and its event stream have their own adapters). */
export type AgentSteps = Record<Exclude<StepName, typeof Steps.ApprovalCallback | typeof Steps.RunsApi | typeof Steps.RunEvents | typeof Steps.BatchItem>, StepFn>;

/**
 * What each step's wiring reads, made once per agent: the agent as its steps see it (with its
 * deps, built on the first tool call, for its approval rules: conversation/turns.ts), the prices
 * (the agent's own over the built-in table, the deployment's over both, unless the harness was
 * given a table) and this code's fingerprint, which every step checks the run against
 * (runs/versions.ts).
 */
export interface StepContext {
  readonly agent: AgentDefinition;
  readonly agentDeps: () => unknown;
  readonly deps: HarnessDeps;
  readonly prices: PriceTable | undefined;
  readonly fingerprint: CodeFingerprint;
}

export function stepContext(defined: AgentDefinition, deps: HarnessDeps): StepContext {
  let agentDeps: { value: unknown } | undefined;
  const agentDepsOnce = () => (agentDeps ??= { value: defined.deps?.(deps.agentEnv, { fetch: deps.agentFetch ?? globalThis.fetch }) }).value;
  const agent = withAgentDeps(defined, agentDepsOnce);
  const prices = deps.priceTable ?? deploymentPrices(agent.prices, deps.prices);
  return { agent, agentDeps: agentDepsOnce, deps, prices, fingerprint: deps.fingerprint ?? codeFingerprint(agent, deps.codeVersion, prices) };
}

/**
 * One step's wiring: a module of its own per step (wiring/steps/), so that a Lambda function's
 * bundle (lambdas/handlers/, through adapters/aws-deps.ts `lambdaStep`) holds its own step's
 * modules and no other's: esbuild drops a function nothing calls, never an object's member, nor the
 * top-level statements (zod schemas) of a module that is imported at all.
 */
export type StepWiring = (context: StepContext) => StepFn;

// The steps whose errors retry or loop beyond the definition's MaxAttempts record them for the handoff's bound (guards/history.ts).
export const metered = ({ deps }: StepContext, step: StepFn): StepFn => meteredStep(step, { ledger: deps.ledger, clock: deps.clock });
/** What the approval steps share (RequestApproval, the expiry sweep). */
export const approvals = ({ agent, deps }: StepContext) => ({ agent, agentName: agent.name, ledger: deps.ledger, callbacks: deps.callbacks, clock: deps.clock, notify: deps.notify, ...deps.approvals });
/** What recovery shares with the sweeper. */
export const recover = ({ agent, deps }: StepContext) => ({ agent, ledger: deps.ledger, starter: deps.starter, clock: deps.clock, policy: deps.recoveryPolicy });

/** A step built on its first call. */
export function lazyStep(make: () => StepFn): StepFn {
  let step: StepFn | undefined;
  return (event, signal) => (step ??= make())(event, signal);
}

