import { assertToolsFitTimeout, ToolTimeoutEnvironment, type AgentDefinition } from '../../lambdas/define.js';
import { ErrorNames } from '../../lambdas/shared/errors.js';
import type { Clock } from '../../lambdas/shared/ports.js';
import { parseOrThrow } from '../../lambdas/shared/validation.js';
import { Steps, type StepName } from '../../lambdas/shared/steps.js';
import { extractStateMachine, walkStates, type AslState, type CfnTemplateJson, type ExtractedStateMachine } from '../template/asl.js';
import { LocalEngine, type EngineIam, type TaskBinding, type Timers } from '../engine/local-engine.js';
import { functionTimeoutMs } from '../aws/lambda-function-timeout.js';
import type { LambdaConcurrency } from '../aws/lambda-concurrency.js';
import { validatedDefinitions } from '../template/cache.js';
import type { LocalStackOptions } from './options.js';

/**
 * A step as the engine's Task states call it: the state's input, its function's timeout in ms, and
 * the signal its Task's timeout aborts.
 */
export type LocalHandler = (event: unknown, timeoutMs: number, signal?: AbortSignal) => Promise<unknown>;
export type LocalHandlers = Record<StepName, LocalHandler>;

/** infra's `States.WaitRetryAfter`, by value: importing infra/ would load the CDK (see local/template/synthesize.ts). */
const WAIT_RETRY_AFTER = 'WaitRetryAfter';
/** infra's `States.WaitSettle`, by value (as above). */
const WAIT_SETTLE = 'WaitSettle';

/**
 * The synthesized state machine on the in-process engine: each Task state calls the handlers of
 * its version (`current()` when invoked: version 1 keeps the handlers it started with), and waits
 * local time, compressed, between retries.
 */
export function localEngine(
  extracted: ExtractedStateMachine,
  current: () => LocalHandlers,
  clock: Clock & Partial<Timers>,
  options: LocalStackOptions & { leaseMs: number },
  twin: { template: CfnTemplateJson; iam?: EngineIam; aliases: readonly string[]; concurrency?: LambdaConcurrency },
): LocalEngine {
  // Every Task state, those inside the tool calls' Map included (the library keys overrides by state name).
  const retryIntervalOverrides: Record<string, number[]> = {};
  walkStates(extracted.definition, (stateName, state) => {
    if (stateName in extracted.tasks) retryIntervalOverrides[stateName] = localRetryDelays(state, options);
  });
  return new LocalEngine({
    definition: extracted.definition,
    stateMachineArn: extracted.stateMachineArn,
    tasks: bindTasks(extracted.tasks, current, twin.template, options.functionTimeoutMs, twin.concurrency),
    retryIntervalOverrides,
    ...waitOverrides(clock, options),
    ...(options.taskTimeoutMs && { taskTimeoutOverrides: { ...options.taskTimeoutMs } }),
    now: () => clock.now(),
    // A clock that can arm timers runs the Tasks' timeouts too (a test's clock: no real wait).
    ...(clock.after && { timers: { after: clock.after.bind(clock) } }),
    validated: validatedDefinitions(),
    ...(twin.iam && { iam: twin.iam }),
    aliases: twin.aliases,
    ...(options.retainFinishedExecutions !== undefined && { retainFinished: options.retainFinishedExecutions }),
  });
}

/**
 * The Wait states the local engine waits otherwise than their seconds. A settling send (WaitSettle)
 * is waited out in real seconds on the system clock, as on AWS; on a clock a test moves by hand,
 * real seconds are not its time, so CallTool looks again every half lease and finds the settle
 * time over once the test has moved the clock past it.
 */
function waitOverrides(clock: Clock & Partial<Timers>, options: Pick<LocalStackOptions, 'retryAfterWaitMs' | 'leaseMs'>): { waitTimeOverrides?: Record<string, number> } {
  const overrides: Record<string, number> = {
    ...(options.retryAfterWaitMs !== undefined && { [WAIT_RETRY_AFTER]: options.retryAfterWaitMs }),
    ...(clock.after && { [WAIT_SETTLE]: options.leaseMs! / 2 }),
  };
  return Object.keys(overrides).length > 0 ? { waitTimeOverrides: overrides } : {};
}

/**
 * A version's Tasks call its own handlers (`current()` when bound: the first version's are the
 * stack's handlers; a deployed version's, its agent's — local/aws/state-machine-versions.ts).
 */
export function bindTasks(
  tasksOf: ExtractedStateMachine['tasks'],
  current: () => LocalHandlers,
  template: CfnTemplateJson,
  functionTimeoutOverrides: LocalStackOptions['functionTimeoutMs'] = {},
  concurrency?: LambdaConcurrency,
): Record<string, TaskBinding> {
  const tasks: Record<string, TaskBinding> = {};
  for (const [stateName, task] of Object.entries(tasksOf)) {
    if (!(Object.values(Steps) as string[]).includes(task.step)) throw new Error(`Task state ${stateName} runs an unknown step ${task.step}`);
    // What Lambda gives the invocation: its function's Timeout in the template, not the Task's.
    const timeoutMs = functionTimeoutOverrides[stateName] ?? functionTimeoutMs(template, task.functionLogicalId);
    tasks[stateName] = {
      waitForTaskToken: task.waitForTaskToken,
      invoke: (payload, signal) => current()[task.step as StepName](payload, timeoutMs, signal),
      ...(concurrency && { admit: () => concurrency.acquire(task.functionLogicalId) }),
    };
  }
  return tasks;
}

/**
 * What StartRun and CallTool check at their cold start on AWS (lambdas/adapters/aws-deps.ts): that
 * the agent's tools fit the `toolTimeout` their functions were deployed with (TOOL_TIMEOUT_MS in
 * the template), else a tool would outlast its CallTool function. Locally before the stack starts
 * and at each deploy, so such an agent fails at once, naming the tool and both timeouts.
 */
export function assertToolsFitTemplate(agent: Pick<AgentDefinition, 'name' | 'tools'>, template: CfnTemplateJson, stateMachineLogicalId?: string): void {
  for (const { functionLogicalId } of Object.values(extractStateMachine(template, { ...(stateMachineLogicalId && { stateMachineLogicalId }) }).tasks)) {
    const environment = template.Resources?.[functionLogicalId]?.Properties?.['Environment'] as { Variables?: Record<string, unknown> } | undefined;
    if (environment?.Variables?.['TOOL_TIMEOUT_MS'] === undefined) continue;
    assertToolsFitTimeout(agent, parseOrThrow(ToolTimeoutEnvironment(), environment.Variables, `Lambda function ${functionLogicalId}: Environment.Variables`).TOOL_TIMEOUT_MS);
  }
}

/** The local wait before each retrier's retries, in the order of the state's `Retry` list. */
function localRetryDelays(state: AslState | undefined, options: Pick<LocalStackOptions, 'breakerRetryDelayMs' | 'leaseMs' | 'retryDelayMs'>): number[] {
  const retriers = (state?.['Retry'] ?? []) as { ErrorEquals: string[] }[];
  return retriers.map((retrier) =>
    retrier.ErrorEquals.includes(ErrorNames.CircuitOpen)
      ? (options.breakerRetryDelayMs ?? 600)
      : retrier.ErrorEquals.includes(ErrorNames.LeaseHeld)
        ? options.leaseMs! / 2
        : (options.retryDelayMs ?? 20),
  );
}
