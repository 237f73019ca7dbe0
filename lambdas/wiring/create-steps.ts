import { toolNames, type AgentDefinition } from '../define.js';
import type { CircuitBreaker } from '../guards/breaker.js';
import { meteredStep } from '../guards/history.js';
import type { Ledger } from '../ledger/ledger.js';
import type { ApprovalRecord, BudgetCaps } from '../records/ledger-records.js';
import type { FleetBudget } from '../records/fleet.js';
import { deploymentPrices, type PriceOverrides, type PriceTable } from '../models/prices.js';
import type { ModelRegistry } from '../models/registry.js';
import { Steps, type StepName } from '../shared/steps.js';
import type { DecisionMac } from '../approvals/decision-mac.js';
import type { ApprovalNotifier, ApprovalRequested } from '../approvals/notify.js';
import type { ApprovalPolicy } from '../approvals/policy.js';
import type { ApprovalLinks } from '../approvals/decision.js';
import { createExpireApprovals } from '../steps/expire-approvals.js';
import { createRequestApproval } from '../steps/request-approval.js';
import { createBudgetCheck } from '../steps/budget-check.js';
import { conversation, createCallModel } from '../steps/call-model.js';
import { createCompact } from '../steps/compact.js';
import { createCallTool } from '../steps/call-tool.js';
import type { ToolSecrets } from '../tools/secrets.js';
import { forkEffects } from '../runs/fork.js';
import { createExecutionStopped } from '../steps/execution-stopped.js';
import type { ChildStarter } from '../tools/child-runs.js';
import { createFinalize } from '../steps/finalize.js';
import { createHandoff } from '../steps/handoff.js';
import type { Clock, Executions, TaskCallbacks } from '../shared/ports.js';
import { createRecoverOnStatusChange, type ExecutionStarter, type RecoveryPolicy } from '../steps/recover-run.js';
import { createStartRun } from '../steps/start-run.js';
import { createSweep, type ExecutionLookup } from '../steps/sweep.js';
import { createPruneVersions, type StateMachineVersions } from '../steps/prune-versions.js';
import { codeFingerprint } from '../runs/versions.js';
import { withAgentDeps } from '../conversation/turns.js';

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
 * The steps of one agent, wired once for both engines. Each step is built on its first call:
 * its dependencies are read then, not before.
 */
export function createSteps(defined: AgentDefinition, deps: HarnessDeps): AgentSteps {
  let agentDeps: { value: unknown } | undefined;
  const agentDepsOnce = () => (agentDeps ??= { value: defined.deps?.(deps.agentEnv, { fetch: deps.agentFetch ?? globalThis.fetch }) }).value;
  // The agent as its steps see it: with its deps, for its approval rules (conversation/turns.ts).
  const agent = withAgentDeps(defined, agentDepsOnce);
  const approvals = () => ({ agent, agentName: agent.name, ledger: deps.ledger, callbacks: deps.callbacks, clock: deps.clock, notify: deps.notify, ...deps.approvals });
  const recover = () => ({ agent, ledger: deps.ledger, starter: deps.starter, clock: deps.clock, policy: deps.recoveryPolicy });
  // The agent's own prices over the built-in table, the deployment's over both, unless the harness was given a table.
  const prices = deps.priceTable ?? deploymentPrices(agent.prices, deps.prices);
  // What every step checks the run against (runs/versions.ts): this code's fingerprint.
  const fingerprint = codeFingerprint(agent, deps.codeVersion, prices);
  // The steps whose errors retry or loop beyond the definition's MaxAttempts record them for the handoff's bound (guards/history.ts).
  const metered = (step: StepFn): StepFn => meteredStep(step, { ledger: deps.ledger, clock: deps.clock });
  return {
    [Steps.StartRun]: lazy(() => createStartRun({
        agent,
        ledger: deps.ledger,
        executions: deps.executions,
        clock: deps.clock,
        codeVersion: deps.codeVersion,
        defaultModel: deps.defaultModel,
        priceTable: prices,
        starterMac: deps.approvals?.starterMac,
        maxBudgets: deps.maxBudgets,
      })),
    [Steps.BudgetCheck]: lazy(() => createBudgetCheck({ agent, fingerprint, ledger: deps.ledger, clock: deps.clock, decisionMac: deps.approvals?.decisionMac, priceTable: prices })),
    [Steps.CallModel]: lazy(() => metered(createCallModel({ agent, fingerprint, ledger: deps.ledger, models: deps.models, clock: deps.clock, breaker: deps.breaker, priceTable: prices, fleetBudget: deps.fleetBudget }))),
    [Steps.RequestApproval]: lazy(() => createRequestApproval(approvals())),
    [Steps.CallTool]: lazy(() =>
      // A fork's writes are reused from its parent, or not sent (runs/fork.ts); other runs' tools are as they are.
      metered(createCallTool({ agent: forkEffects(agent, deps.ledger), fingerprint, agentDeps: agentDepsOnce, ledger: deps.ledger, clock: deps.clock, breaker: deps.breaker, leaseMs: deps.leaseMs, decisionMac: deps.approvals?.decisionMac, toolSecrets: deps.toolSecrets, callbacks: deps.callbacks, ...(deps.children && { children: deps.children }) })),
    ),
    [Steps.Finalize]: lazy(() => createFinalize({ ledger: deps.ledger, clock: deps.clock, agent })),
    [Steps.ExpireApprovals]: lazy(() => {
      const expire = createExpireApprovals(approvals());
      return () => expire();
    }),
    [Steps.ExecutionStopped]: lazy(() => createExecutionStopped({ ledger: deps.ledger, clock: deps.clock, callbacks: deps.callbacks, agentOf: (name) => (name === agent.name ? agent : undefined), ...(deps.children && { children: deps.children }) })),
    [Steps.RecoverRun]: lazy(() => createRecoverOnStatusChange(recover())),
    [Steps.Sweep]: lazy(() => {
      if (!deps.lookup) throw new Error('the sweep step needs an execution lookup (HarnessDeps.lookup)');
      const sweep = createSweep({ ...recover(), executions: deps.lookup });
      return () => sweep();
    }),
    [Steps.Compact]: lazy(() =>
      metered(createCompact({ agent, ledger: deps.ledger, models: deps.models, clock: deps.clock, breaker: deps.breaker, conversation: (run, turns, calls) => conversation(run, turns, calls, toolNames(agent)), priceTable: prices, fleetBudget: deps.fleetBudget })),
    ),
    [Steps.Handoff]: lazy(() => createHandoff({ ledger: deps.ledger, starter: deps.starter, clock: deps.clock })),
    [Steps.PruneVersions]: lazy(() => {
      if (!deps.versions) throw new Error('the version pruner needs the state machine\'s versions (HarnessDeps.versions)');
      const prune = createPruneVersions({ versions: deps.versions, clock: deps.clock, ...(deps.keepVersions !== undefined && { keep: deps.keepVersions }) });
      return () => prune();
    }),
  };
}

function lazy(make: () => StepFn): StepFn {
  let step: StepFn | undefined;
  return (event, signal) => (step ??= make())(event, signal);
}

