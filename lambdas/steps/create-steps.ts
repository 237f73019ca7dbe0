import type { ModelClient } from '../agent/messages.js';
import type { AgentDefinition } from '../define.js';
import type { CircuitBreaker } from '../guards/breaker.js';
import type { Ledger } from '../ledger/ledger.js';
import type { ApprovalRecord } from '../ledger/records.js';
import { Steps, type StepName } from '../shared/steps.js';
import { createExpireApprovals, createRequestApproval } from './approvals.js';
import { createBudgetCheck } from './budget-check.js';
import { conversation, createCallModel, MODEL_BREAKER, modelIdOf } from './call-model.js';
import { createCompact } from './compaction.js';
import { createCallTool } from './call-tool.js';
import { createExecutionStopped } from './execution-stopped.js';
import { createFinalize } from './finalize.js';
import { createHandoff } from './handoff.js';
import type { Clock, Executions, TaskCallbacks } from './ports.js';
import { createRecoverOnStatusChange, type ExecutionStarter, type RecoveryPolicy } from './recover.js';
import { createStartRun } from './start-run.js';

/**
 * What the steps of one agent need from the outside. The Lambda adapter (adapters/aws-deps.ts)
 * defines these as getters that build each client on first use, so a function builds only the
 * clients its step reads; the local runtime passes plain values.
 */
export interface HarnessDeps {
  readonly ledger: Ledger;
  readonly model: ModelClient;
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
  /** A new approval waits for a person. */
  readonly notify?: (approval: ApprovalRecord) => void;
}

export type StepFn = (event: unknown, signal?: AbortSignal) => Promise<unknown>;

/** The steps a Task state or an event rule invokes (the approval API has its own adapter). */
export type AgentSteps = Record<Exclude<StepName, typeof Steps.ApprovalCallback>, StepFn>;

/**
 * The steps of one agent, wired once for both engines. Each step is built on its first call:
 * its dependencies are read then, not before.
 */
export function createSteps(agent: AgentDefinition, deps: HarnessDeps): AgentSteps {
  let agentDeps: { value: unknown } | undefined;
  const agentDepsOnce = () => (agentDeps ??= { value: agent.deps?.(deps.agentEnv) }).value;
  const approvals = () => ({ agent, agentName: agent.name, ledger: deps.ledger, callbacks: deps.callbacks, clock: deps.clock, notify: deps.notify });
  const recover = () => ({ agent, ledger: deps.ledger, starter: deps.starter, clock: deps.clock, policy: deps.recoveryPolicy });
  return {
    [Steps.StartRun]: lazy(() => createStartRun({ agent, ledger: deps.ledger, executions: deps.executions, clock: deps.clock, codeVersion: deps.codeVersion })),
    [Steps.BudgetCheck]: lazy(() => createBudgetCheck({ agent, ledger: deps.ledger, clock: deps.clock, history: deps.executions })),
    [Steps.CallModel]: lazy(() => createCallModel({ agent, ledger: deps.ledger, model: deps.model, clock: deps.clock, breaker: deps.breaker })),
    [Steps.RequestApproval]: lazy(() => createRequestApproval(approvals())),
    [Steps.CallTool]: lazy(() =>
      createCallTool({ agent, agentDeps: agentDepsOnce, ledger: deps.ledger, clock: deps.clock, breaker: deps.breaker, leaseMs: deps.leaseMs }),
    ),
    [Steps.Finalize]: lazy(() => createFinalize({ ledger: deps.ledger, clock: deps.clock })),
    [Steps.ExpireApprovals]: lazy(() => {
      const expire = createExpireApprovals(approvals());
      return () => expire();
    }),
    [Steps.ExecutionStopped]: lazy(() => createExecutionStopped({ agent, ledger: deps.ledger, clock: deps.clock })),
    [Steps.RecoverRun]: lazy(() => createRecoverOnStatusChange(recover())),
    [Steps.Compact]: lazy(() =>
      createCompact({ agent, ledger: deps.ledger, model: deps.model, clock: deps.clock, breaker: deps.breaker, conversation, breakerName: MODEL_BREAKER, modelIdOf }),
    ),
    [Steps.Handoff]: lazy(() => createHandoff({ ledger: deps.ledger, starter: deps.starter, clock: deps.clock })),
  };
}

function lazy(make: () => StepFn): StepFn {
  let step: StepFn | undefined;
  return (event, signal) => (step ??= make())(event, signal);
}
