import type { SFNClient } from '@aws-sdk/client-sfn';
import type { Context } from 'aws-lambda';
import { localFleetBudget } from './fleet-budget.js';
import { stepHandler, timeoutEarlyError, TIMEOUT_EARLY_MS, type ErrorLog } from '../../lambdas/adapters/middleware.js';
import { toolFailureFields } from '../../lambdas/adapters/step-telemetry.js';
import { sourceMappedStack } from './agent-errors.js';
import { sfnExecutions, sfnStarter, sfnTaskCallbacks, sfnVersions } from '../../lambdas/adapters/sfn.js';
import type { AgentDefinition, DevWorld } from '../../lambdas/define.js';
import { CircuitBreaker } from '../../lambdas/guards/breaker.js';
import { LOCAL_BREAKER } from './local-breaker.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import { modelConfigFromEnv } from '../../lambdas/models/config.js';
import { modelRegistry, wrapModels } from '../../lambdas/models/registry.js';
import { timersOf, type Clock } from '../../lambdas/shared/ports.js';
import { Steps, type StepName } from '../../lambdas/shared/steps.js';
import { createSteps, type ApprovalSetup } from '../../lambdas/wiring/create-steps.js';
import type { ToolSecrets } from '../../lambdas/tools/secrets.js';
import type { ModelServer } from '../../sim/model-server.js';
import { crashingCallTool, crashingChildren, crashingLedger, crashingModel } from './crash.js';
import type { ChildStarter } from '../../lambdas/tools/child-runs.js';
import type { LocalEngine } from '../engine/local-engine.js';
import type { TwinIam } from '../aws/iam/index.js';
import type { SfnQuotas } from '../aws/sfn-api-throttling.js';
import { lambdaContext } from '../services/lambda-context.js';
import type { localApprovalSetup } from './approvals.js';
import type { LocalStackOptions } from './options.js';
import type { LocalHandlers } from './tasks.js';


/** What the local stack has started that the steps' clients point at. */
export interface LocalWiring<World extends DevWorld = DevWorld> {
  readonly options: LocalStackOptions<World>;
  readonly ledger: Ledger;
  /** The ledger as a step's function sees it: its calls authorized as its role (local/aws/iam/dynamodb.ts), or `ledger` without IAM. */
  readonly ledgerOf: (step: StepName) => Ledger;
  readonly clock: Clock;
  readonly model: ModelServer;
  readonly world: World;
  readonly sfn: SFNClient;
  /** The client a step's function calls Step Functions with: signed as its own role (local/runtime/sfn-clients.ts). */
  readonly sfnAs: (step: StepName) => SFNClient;
  readonly engine: LocalEngine;
  /** Where the functions start runs (their STATE_MACHINE_ARN on AWS: the alias, when the template has one). */
  readonly stateMachineArn: string;
  /** The twin's IAM and quotas on the in-process history read, which makes no endpoint call. */
  readonly iam?: Pick<TwinIam, 'authorizeAs'>;
  readonly quotas?: Pick<SfnQuotas, 'take'>;
  readonly leaseMs: number;
  readonly approvals: ReturnType<typeof localApprovalSetup>;
  /** The approval machinery as a step's function uses it: its calls to AWS authorized as its role (local/aws/iam/services.ts). */
  readonly approvalsOf: (step: StepName) => ApprovalSetup;
  /** The tool credentials as a step's function reads them: authorized as its role (local/aws/iam/services.ts `toolSecretsAs`). */
  readonly toolSecretsOf: (step: StepName) => ToolSecrets;
  /** A new approval waits: its deadline timer is armed (local/runtime/approvals.ts). */
  readonly armDeadline: (approval: ApprovalRecord) => void;
  /** The invocations in flight, which a closing stack waits for. */
  readonly inFlight: Set<Promise<unknown>>;
  readonly closing: () => boolean;
  /** Starts and stops child runs on the stacks of the agent's child agents, as a step's role (local/runtime/children.ts). @default none */
  readonly childrenAs?: (step: StepName) => ChildStarter;
}

type StepFunction = (event: unknown, signal?: AbortSignal) => Promise<unknown>;

export interface LocalInvocation {
  /** The function's timeout (its `Timeout`), in milliseconds. */
  readonly timeoutMs: number;
  /** What the invocation's time is counted and its early timeout armed on. */
  readonly clock: Clock;
  readonly log: ErrorLog;
  /** The Task's timeout, which aborts the invocation as well. */
  readonly taskSignal?: AbortSignal;
}

/**
 * One invocation of a step's function, as a Lambda container runs it: in the same middy handler as
 * on AWS, with its own abort signal, which fires `TIMEOUT_EARLY_MS` before the function's timeout
 * and fails the invocation with middy's TimeoutError. Not middy's early timeout: its signal is one
 * for the whole process (harmless on AWS, one invocation per container at a time), and the runtime
 * runs many invocations of a function at once (a Map's tool calls, several runs), so one timing out
 * would abort them all. Timed on `clock`'s timers, so a test's clock fires it with no real wait.
 */
export function invokeLocally(step: StepName, fn: StepFunction, event: unknown, invocation: LocalInvocation): Promise<unknown> {
  return localFunction(step, fn, invocation.log)(event, invocation);
}

/** Each invocation's timing, found by its Lambda context (one per invocation) inside the function's one handler. */
const invocations = new WeakMap<Context, Omit<LocalInvocation, 'log'>>();

/**
 * A step's function as a container holds it: one middy handler for all its invocations (as on
 * AWS, where the handler is made once at its cold start, not per invocation), each invocation
 * timed as `invokeLocally` says. The handler keeps no state between invocations (middy makes each
 * request its own), so invocations of one function may run at once.
 */
export function localFunction(step: StepName, fn: StepFunction, log: ErrorLog): (event: unknown, invocation: Omit<LocalInvocation, 'log'>) => Promise<unknown> {
  const timed = (e: unknown, _signal?: AbortSignal, context?: Context) => {
    const { clock, taskSignal } = invocations.get(context!)!;
    // One controller for the invocation: the function's early timeout aborts it, and so does the
    // Task's timeout, through a listener removed once the invocation is over (not AbortSignal.any,
    // which leaves a WeakRef on the Task's signal for its lifetime).
    const aborts = new AbortController();
    const onTaskAbort = () => aborts.abort(taskSignal!.reason);
    if (taskSignal?.aborted) onTaskAbort();
    else taskSignal?.addEventListener('abort', onTaskAbort, { once: true });
    return new Promise<unknown>((resolve, reject) => {
      let settled = false;
      const cancel = timersOf(clock).after(context!.getRemainingTimeInMillis() - TIMEOUT_EARLY_MS, () => {
        if (settled) return;
        settled = true;
        // Failed before the signal aborts: a step that rejects at the abort does not win the race.
        reject(timeoutEarlyError());
        aborts.abort();
        taskSignal?.removeEventListener('abort', onTaskAbort);
      });
      const end = () => {
        settled = true;
        cancel();
        taskSignal?.removeEventListener('abort', onTaskAbort);
      };
      let step: Promise<unknown>;
      try {
        step = fn(e, aborts.signal);
      } catch (error) {
        end();
        reject(error as Error);
        return;
      }
      step.then(
        (value) => {
          if (settled) return;
          end();
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          end();
          reject(error as Error);
        },
      );
    });
  };
  const handler = stepHandler(timed, log, { timeoutEarly: false });
  return (event, invocation) => {
    const context = lambdaContext(step, invocation.timeoutMs, invocation.clock);
    invocations.set(context, invocation);
    return handler(event, context) as Promise<unknown>;
  };
}

/**
 * The handlers of one version of the agent: its steps (lambdas/wiring/create-steps.ts) inside the
 * same middy handlers as on AWS, their clients pointed at this machine.
 */
/** A log line of the engine's (JSON) with its `stack`, if any, put back where the code was written: the user's files, not the bundles'. */
function sourceMappedLine(line: string): string {
  if (!line.includes('"stack"')) return line;
  const fields = JSON.parse(line) as Record<string, unknown>;
  return typeof fields['stack'] === 'string' ? JSON.stringify({ ...fields, stack: sourceMappedStack(fields['stack']) }) : line;
}

export function localHandlers<World extends DevWorld>(agent: AgentDefinition<any, any, World>, codeVersion: string, wiring: LocalWiring<World>): LocalHandlers {
  const { options, ledger, clock, model, world, inFlight, sfnAs } = wiring;
  const bind = (step: StepName, fn: StepFunction) => {
    const invoke = localFunction(step, fn, (line) => options.log?.(sourceMappedLine(line)));
    return (event: unknown, timeoutMs: number, taskSignal?: AbortSignal) => {
      if (wiring.closing()) return Promise.reject(new Error(`the local stack is closing: ${step} not invoked`));
      const invocation = invoke(event, { timeoutMs, clock, ...(taskSignal && { taskSignal }) });
      inFlight.add(invocation);
      const settled = () => void inFlight.delete(invocation);
      invocation.then(settled, settled);
      return invocation;
    };
  };
  // Crash injection wraps the ledger and the model client from outside: the steps have no hooks.
  const stepLedger = (step: StepName): Ledger => (options.crash ? crashingLedger(wiring.ledgerOf(step), options.crash) : wiring.ledgerOf(step));
  // `sim:` models go to the simulated model; the others to the providers the environment names.
  const models = modelRegistry(() => ({ ...modelConfigFromEnv(options.modelEnv ?? process.env), sim: { baseUrl: options.modelUrl ?? model.url, apiKey: 'local', promptCaching: options.promptCaching ?? true, fetch: model.fetch } }));
  const crash = options.crash;
  const crashing = crash ? wrapModels(models, (client) => crashingModel(client, crash)) : models;
  // Each function its own deps, as each Lambda function has its own clients and role.
  const stepsAs = (step: StepName) => createSteps(agent, {
    ledger: stepLedger(step),
    models: options.wrapModel ? wrapModels(crashing, options.wrapModel) : crashing,
    clock,
    breaker: new CircuitBreaker(wiring.ledgerOf(step), clock, options.breaker ?? LOCAL_BREAKER),
    callbacks: sfnTaskCallbacks(sfnAs(step)),
    executions: sfnExecutions(sfnAs(step)),
    starter: sfnStarter(sfnAs(step), wiring.stateMachineArn),
    versions: sfnVersions(sfnAs(step), wiring.stateMachineArn),
    leaseMs: wiring.leaseMs,
    codeVersion,
    ...(options.prices && { prices: options.prices }),
    ...(options.maxBudgets && { maxBudgets: options.maxBudgets }),
    ...(options.fleetBudget && { fleetBudget: localFleetBudget(options.fleetBudget, wiring.stateMachineArn, agent.name) }),
    recoveryPolicy: options.recovery || undefined,
    agentEnv: { ...world.env, ...options.agentEnv },
    // The world is served in process: a step's tool call pays no loopback round trip.
    ...(world.fetch && { agentFetch: world.fetch }),
    notify: (approval, event) => {
      wiring.armDeadline(approval);
      options.onApproval?.(approval, event);
    },
    approvals: wiring.approvalsOf(step),
    // Only CallTool serves tools their secrets, as only its role reads them on AWS.
    ...(step === Steps.CallTool && { toolSecrets: wiring.toolSecretsOf(step) }),
    // A tool's own failure, with its stack, to the engine's log (savepoint.log), as CloudWatch has it on AWS.
    onToolFailure: (tool, error) => options.log?.(sourceMappedLine(JSON.stringify({ level: 'ERROR', message: 'tool failed', ...toolFailureFields(tool, error) }))),
    ...(wiring.childrenAs && { children: crash ? crashingChildren(wiring.childrenAs(step), crash) : wiring.childrenAs(step) }),
  });
  const stepNames = Object.keys(stepsAs(Steps.StartRun)) as (keyof ReturnType<typeof stepsAs>)[];
  // CallTool announces its return too: what it recorded must be durable by then.
  const stepOf = (step: (typeof stepNames)[number]): StepFunction => {
    const fn = stepsAs(step)[step] as StepFunction;
    return crash && step === Steps.CallTool ? crashingCallTool(fn, crash) : fn;
  };
  const bound = Object.fromEntries(stepNames.map((step) => [step, bind(step, stepOf(step))]));
  return {
    ...bound,
    [Steps.ApprovalCallback]: () => Promise.reject(new Error('the approval callback is served by the approval API')),
  } as unknown as LocalHandlers;
}
