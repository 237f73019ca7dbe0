import * as z from 'zod';
import { createExpireApprovals } from '../steps/expire-approvals.js';
import { createPruneStackVersions, type FunctionVersions } from '../steps/prune-function-versions.js';
import { createSweep } from '../steps/sweep.js';
import type { AgentDefinition } from '../define.js';
import { createExecutionStopped } from '../steps/execution-stopped.js';
import { createRecoverOnStatusChange } from '../steps/recover-run.js';
import type { ExecutionStarter } from '../steps/recover-run.js';
import { LIVE_ALIAS } from '../runs/versions.js';
import { parseOrThrow } from '../shared/validation.js';
import { Steps } from '../shared/steps.js';
import type { AwsClients } from './aws-clients.js';
import type { StepFunctionsPorts } from './sfn-clients.js';
import { awsDeps, jsonVariable } from './aws-deps.js';
import { stepHandler } from './middleware.js';
import { powertools } from './powertools.js';
import { stateMachineArnOf } from './sfn.js';

/**
 * The functions every agent of a stack shares (infra/control-plane.ts): the approval expiry sweep,
 * the sweeper and the version pruner. They load no agent's code — nothing they do depends on it —
 * and act on every agent of the stack's ledger: an approval or a run names its execution, whose
 * state machine (and its `live` alias) the ARN carries; the state machines whose versions are
 * pruned are named in the environment (PRUNE_VERSIONS: a few bytes an agent, within Lambda's 4 KB).
 * Their metrics carry the stack as their `service` (POWERTOOLS_SERVICE_NAME), not an agent.
 */
export const ControlPlaneEnvironment = z.object({
  /** The metrics' `service` dimension: the stack's name. */
  POWERTOOLS_SERVICE_NAME: z.string().min(1),
  /** The ARN every agent's state machine name follows (`arn:…:stateMachine:<stack>-`). */
  STATE_MACHINE_ARN_PREFIX: z.string().startsWith('arn:'),
  /** Each agent's state machine, by the rest of its name, and how many versions it keeps (DurableAgent's `keepVersions`). */
  PRUNE_VERSIONS: jsonVariable(z.record(z.string().min(1), z.number().int().min(1).max(999))),
});

/** RecoverRun's: each agent's bound of recoveries without progress (DurableAgent's `maxRecoveries`), by name. */
export const RecoveryEnvironment = z.object({
  RECOVERY_BOUNDS: jsonVariable(z.record(z.string().min(1), z.number().int().min(1).max(20))),
});

export function controlPlaneHandlers(options: { env?: NodeJS.ProcessEnv; clients?: AwsClients } = {}) {
  const env = options.env ?? process.env;
  const { POWERTOOLS_SERVICE_NAME: service } = parseOrThrow(ControlPlaneEnvironment.pick({ POWERTOOLS_SERVICE_NAME: true }), env, 'Lambda environment');
  const { telemetry, tracing, traced } = powertools(service);
  const deps = awsDeps(env, { traced, telemetry }, undefined, undefined, options.clients);
  let made: StepFunctionsPorts | undefined;
  const sfn = (): StepFunctionsPorts => {
    if (!options.clients?.stepFunctions) throw new Error("this function's handler passes no Step Functions client: add it to the clients of its file in lambdas/handlers/ (lambdas/adapters/aws-clients.ts)");
    return (made ??= options.clients.stepFunctions(traced));
  };
  let lambda: Promise<FunctionVersions> | undefined;
  const functions = (): Promise<FunctionVersions> => {
    if (!options.clients?.functionVersions) throw new Error("this function's handler passes no Lambda client: add it to the clients of its file in lambdas/handlers/ (lambdas/adapters/aws-clients.ts)");
    return (lambda ??= options.clients.functionVersions(traced).catch((error: unknown) => ((lambda = undefined), Promise.reject(error))));
  };
  const handler = (step: typeof Steps.ExpireApprovals | typeof Steps.Sweep | typeof Steps.PruneVersions | typeof Steps.RecoverRun | typeof Steps.ExecutionStopped, run: (event: unknown) => Promise<unknown>) =>
    stepHandler((event) => run(event), undefined, { step, telemetry, middlewares: [tracing] });
  return {
    /** Every agent's approvals past their deadline (no agent named: all of the ledger's). */
    expireApprovals: () => handler(Steps.ExpireApprovals, () => createExpireApprovals({ ledger: deps.ledger, callbacks: sfn().callbacks, clock: deps.clock })()),
    /** Every agent's runs whose execution ended unnoticed, each resumed on its own state machine. */
    sweep: () =>
      handler(Steps.Sweep, () => createSweep({ ledger: deps.ledger, executions: sfn().lookup, starter: aliasStarter(sfn().starter), clock: deps.clock, policy: deps.recoveryPolicy })()),
    /** Recovery of every agent's runs whose execution failed or timed out (infra/recovery.ts): no agent's code, no DescribeExecution. */
    recoverRun: () => {
      const { RECOVERY_BOUNDS: bounds } = parseOrThrow(RecoveryEnvironment, env, 'Lambda environment');
      const policyOf = (agent: string | undefined) => (agent !== undefined && bounds[agent] !== undefined ? { maxWithoutProgress: bounds[agent] } : undefined);
      // A run of no agent it knows (older records name none): the largest bound, so none is given up early.
      const recover = createRecoverOnStatusChange({ ledger: deps.ledger, starter: aliasStarter(sfn().starter), clock: deps.clock, policy: { maxWithoutProgress: Math.max(1, ...Object.values(bounds)) }, policyOf });
      return handler(Steps.RecoverRun, (event) => recover(event));
    },
    /** The kill by StopExecution of every agent's runs, and the wake of a parent's wait when a child run ends. */
    executionStopped: (agents: readonly AgentDefinition[] = []) => {
      // A stopped run's child runs are stopped with it (runs/child-tree.ts): found by its agent's agent tools, stopped on the children's state machines (CHILD_STATE_MACHINES).
      const byName = new Map(agents.map((agent) => [agent.name, agent]));
      const children = deps.children;
      return handler(Steps.ExecutionStopped, (event) => createExecutionStopped({ ledger: deps.ledger, clock: deps.clock, callbacks: sfn().callbacks, agentOf: (name) => byName.get(name), ...(children && { children }) })(event));
    },
    /** Each agent's state machine versions, then the Lambda versions none of them pins (lambdas/steps/prune-function-versions.ts). */
    pruneVersions: () =>
      handler(Steps.PruneVersions, () => {
        const config = parseOrThrow(ControlPlaneEnvironment.pick({ STATE_MACHINE_ARN_PREFIX: true, PRUNE_VERSIONS: true }), env, 'Lambda environment');
        const stateMachines = Object.fromEntries(Object.entries(config.PRUNE_VERSIONS).map(([name, keep]) => [name, { versions: sfn().versions(`${config.STATE_MACHINE_ARN_PREFIX}${name}`), keep }]));
        return createPruneStackVersions({ stateMachines, functions, clock: deps.clock })();
      }),
  };
}

/**
 * Starts an execution on the state machine of the one it continues (`on`, or `sameVersionAs`: its
 * version, else that state machine's `live` alias): the shared functions serve every agent's state machine.
 */
export function aliasStarter(starterFor: (stateMachineArn: string) => ExecutionStarter): ExecutionStarter {
  return {
    start: (name, input, options = {}) => {
      // A version (or alias) the caller knows already: started there, no DescribeExecution.
      if (options.on !== undefined) return starterFor(options.on).start(name, input, options);
      if (options.sameVersionAs === undefined) throw new Error('a shared function of the stack starts only continuations of an execution (sameVersionAs or on)');
      return starterFor(`${stateMachineArnOf(options.sameVersionAs)}:${LIVE_ALIAS}`).start(name, input, options);
    },
  };
}
