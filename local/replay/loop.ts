import { ErrorNames } from '../../lambdas/shared/errors.js';
import { DEFAULT_TOOL_CONCURRENCY, Steps } from '../../lambdas/shared/steps.js';
import type { ExecutionStarter } from '../../lambdas/steps/recover-run.js';
import type { TaskCallbacks } from '../../lambdas/shared/ports.js';
import { stepError } from '../../lambdas/tools/failures.js';
import type { AgentSteps, StepFn } from '../../lambdas/wiring/create-steps.js';

/**
 * The agent loop of infra/agent-state-machine.ts, walked over the step functions with no engine:
 * what a replay runs (issue 38: the engine, its ASL interpreter and its endpoints were most of a
 * replay's time, and none of them is what a replay checks). Each state's Task is its step
 * function called with the payload the definition gives it (CallTool's without the decision it
 * may take a handed state from: `toolCall`), its error retried or caught as its
 * `Retry` and `Catch` fields say (LOOP_STATES: test/replay/loop-definition.test.ts holds them to the
 * synthesized definition), the Choice states' rules taken in their order, a turn's tool calls run
 * side by side as the `ToolCalls` Map runs them, and each wait on a task token answered through
 * the same `TaskCallbacks` port the steps use on AWS. A hand-off starts the next execution of the
 * chain, as `StartExecution` does.
 *
 * A retry comes at once (the replay's clock is the recorded one: no wait changes what a step reads).
 * The steps' results are plain JSON data already (what Lambda returns): they go on as they are, a
 * field that is `undefined` taken as absent, as JSON would leave it out.
 */

/** A Retry field: the error names it matches and the retries it allows. */
export interface Retrier {
  readonly errors: readonly string[];
  readonly maxAttempts: number;
}

const LAMBDA_SERVICE: Retrier = {
  errors: ['Lambda.TooManyRequestsException', 'Lambda.ServiceException', 'Lambda.AWSLambdaException', 'Lambda.SdkClientException', 'Lambda.ClientExecutionTimeoutException'],
  maxAttempts: 8,
};
const TIMEOUT: Retrier = { errors: ['States.Timeout'], maxAttempts: 2 };
const TRANSIENT: Retrier = { errors: [ErrorNames.Transient], maxAttempts: 6 };
const THROTTLED: Retrier = { errors: [ErrorNames.ModelThrottled], maxAttempts: 6 };
const CIRCUIT_OPEN: Retrier = { errors: [ErrorNames.CircuitOpen], maxAttempts: 40 };
const LEASE_HELD: Retrier = { errors: [ErrorNames.LeaseHeld], maxAttempts: 8 };
const TASK = [LAMBDA_SERVICE, TIMEOUT, TRANSIENT];
const TOKEN_WAIT = [LAMBDA_SERVICE, TRANSIENT];
const DECIDED = [ErrorNames.ApprovalRejected, ErrorNames.ApprovalExpired, 'States.Timeout'];

/**
 * Each Task state of the loop: its step, its `Retry` fields in order, and its `Catch` fields
 * (error names, and the state they go to), as infra/agent-state-machine.ts writes them.
 */
export const LOOP_STATES = {
  StartRun: { step: Steps.StartRun, retry: TASK, catch: [{ errors: ['States.ALL'], next: 'RunNotStarted' }] },
  CallModel: {
    step: Steps.CallModel,
    retry: [...TASK, THROTTLED, CIRCUIT_OPEN],
    catch: [{ errors: [ErrorNames.ModelRetryAfter], next: 'ReadRetryAfter' }, { errors: ['States.ALL'], next: 'RecordFailure' }],
  },
  CallTool: {
    step: Steps.CallTool,
    retry: [...TASK, LEASE_HELD, CIRCUIT_OPEN],
    catch: [{ errors: [ErrorNames.SettleWait], next: 'ReadSettleWait' }, { errors: [ErrorNames.ApprovalNeeded], next: 'RequestApproval' }, { errors: [ErrorNames.ChildRunPending], next: 'AwaitChildRun' }],
  },
  RequestApproval: { step: Steps.RequestApproval, retry: TOKEN_WAIT, catch: [{ errors: DECIDED, next: 'CallTool' }] },
  AwaitChildRun: { step: Steps.CallTool, retry: TOKEN_WAIT, catch: [] },
  RequestBudgetExtension: { step: Steps.RequestApproval, retry: TOKEN_WAIT, catch: [{ errors: DECIDED, next: 'CallModel' }, { errors: ['States.ALL'], next: 'RecordFailure' }] },
  Compact: { step: Steps.Compact, retry: [...TASK, THROTTLED, CIRCUIT_OPEN], catch: [{ errors: ['States.ALL'], next: 'RecordFailure' }] },
  Handoff: { step: Steps.Handoff, retry: TASK, catch: [{ errors: ['States.ALL'], next: 'HandoffFailed' }] },
  Finalize: { step: Steps.Finalize, retry: TASK, catch: [{ errors: ['States.ALL'], next: 'RecordFailure' }] },
  RecordFailure: { step: Steps.Finalize, retry: TASK, catch: [{ errors: ['States.ALL'], next: 'RunFailed' }] },
} as const satisfies Record<string, { step: keyof AgentSteps; retry: readonly Retrier[]; catch: readonly { errors: readonly string[]; next: string }[] }>;
type LoopState = keyof typeof LOOP_STATES;

/**
 * A state's failure as a `Catch` sees it (`$.error`): the error's name, and Lambda's JSON body as
 * its cause. The cause is written when first read: most failures are only routed by their name
 * (an approval asked for, a retry), and Lambda's body holds the step's stack trace, which costs
 * more to write out than the rest of a step (a source-mapped trace, where source maps are on).
 */
export class StateFailure extends Error {
  #cause: string | (() => string);

  constructor(
    readonly error: string,
    cause: string | (() => string),
  ) {
    // No message of its own: `message` reads the cause, when asked.
    super();
    this.#cause = cause;
  }

  override get cause(): string {
    if (typeof this.#cause === 'function') this.#cause = this.#cause();
    return this.#cause;
  }

  override get message(): string {
    return `${this.error}: ${this.cause}`;
  }

  get asCaught(): { Error: string; Cause: string } {
    return { Error: this.error, Cause: this.cause };
  }
}

/** The execution was stopped from outside (`stop`): nothing more runs, nothing is recorded. */
class Stopped extends Error {}

/** Waits the loop never ends on its own beyond this many (a settle or retry-after time the frozen recorded clock never reaches). */
const MOST_WAITS = 1_000;

export interface LoopDeps {
  /** The steps, each as its function (lambdas/wiring/create-steps.ts) runs it. */
  readonly steps: (step: keyof AgentSteps) => StepFn;
  /** What StartRun is told about the definition (its `definition` payload). */
  readonly definition: { hash: string; executionTimeoutSeconds?: number; approvalWaitSeconds?: number };
  /** How many tool calls of a turn run at once (the Map's MaxConcurrency). @default DEFAULT_TOOL_CONCURRENCY */
  readonly toolConcurrency?: number;
}

/** The executions of one run, the first started by `start`, each next one by a hand-off. */
export interface Loop {
  /** The Step Functions API the steps answer task tokens and start executions through. */
  readonly callbacks: TaskCallbacks;
  readonly starter: ExecutionStarter;
  /** Runs execution `name` with `input`, then each execution it hands the run to; resolves when the last one ends. */
  run(name: string, input: unknown): Promise<void>;
  /** Stops the current execution from outside (StopExecution): every wait fails, no state runs after. */
  stop(): void;
  /** Every step invocation has settled (a Map's other iterations outlive its failure, as Lambda invocations do). */
  settled(): Promise<void>;
}

const EXECUTIONS = 'arn:aws:states:us-east-1:000000000000:execution:savepoint-replay:';
const STATE_MACHINE = 'arn:aws:states:us-east-1:000000000000:stateMachine:savepoint-replay';
const json = <T>(value: T): T => (value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T));
const later = () => new Promise<void>((resolve) => setImmediate(resolve));

export function agentLoop(deps: LoopDeps): Loop {
  const waiting = new Map<string, { resolve: (output: unknown) => void; reject: (failure: Error) => void }>();
  const next: { name: string; input: unknown }[] = [];
  const invocations = new Set<Promise<unknown>>();
  let stopped = false;
  let tokens = 0;

  const callbacks: TaskCallbacks = {
    async succeed(token, output) {
      const wait = waiting.get(token);
      if (!wait) return false;
      waiting.delete(token);
      wait.resolve(json(output));
      return true;
    },
    async fail(token, error, cause) {
      const wait = waiting.get(token);
      if (!wait) return false;
      waiting.delete(token);
      wait.reject(new StateFailure(error, cause));
      return true;
    },
  };
  const starter: ExecutionStarter = {
    async start(name, input) {
      next.push({ name, input: JSON.parse(input) as unknown });
      return { executionArn: `${EXECUTIONS}${name}` };
    },
  };

  /** One Task: the step called until it answers, or its error is one no Retry field takes (more). */
  const task = async (state: LoopState, payload: Record<string, unknown>): Promise<any> => {
    const { step, retry } = LOOP_STATES[state];
    // Made at a first retry: most Tasks succeed at once.
    let retried: Map<Retrier, number> | undefined;
    for (;;) {
      if (stopped) throw new Stopped();
      const invocation = deps.steps(step)(payload);
      invocations.add(invocation);
      let output: unknown;
      try {
        output = await invocation;
      } catch (thrown) {
        // Forgotten once settled, either way, by the Task that waits for it (no reaction of its own).
        invocations.delete(invocation);
        if (stopped) throw new Stopped();
        const failure = lambdaFailure(stepError(thrown));
        const retrier = retry.find((candidate) => candidate.errors.includes(failure.error));
        const count = retrier ? (retried?.get(retrier) ?? 0) : 0;
        if (!retrier || count >= retrier.maxAttempts) throw failure;
        (retried ??= new Map()).set(retrier, count + 1);
        await later();
        continue;
      }
      invocations.delete(invocation);
      return output;
    }
  };

  /** A Task that passes a task token and waits until something answers it (`.waitForTaskToken`). */
  const tokenWait = async (state: LoopState, payload: Record<string, unknown>): Promise<unknown> => {
    const taskToken = `replay-token-${(tokens += 1)}`;
    const answered = new Promise<unknown>((resolve, reject) => waiting.set(taskToken, { resolve, reject }));
    answered.catch(() => undefined);
    try {
      await task(state, { ...payload, taskToken });
    } catch (failure) {
      waiting.delete(taskToken);
      throw failure;
    }
    return answered;
  };

  const caught = (state: LoopState, failure: unknown): string | undefined => {
    if (!(failure instanceof StateFailure)) return undefined;
    const handler = (LOOP_STATES[state].catch as readonly { errors: readonly string[]; next: string }[]).find(({ errors }) => errors.includes(failure.error) || errors.includes('States.ALL'));
    return handler?.next;
  };

  /** One execution of the loop, from StartRun to its end state. */
  const execution = async (name: string, input: unknown): Promise<void> => {
    const executionArn = `${EXECUTIONS}${name}`;
    let runId: string;
    let history: unknown;
    try {
      const started = (await task('StartRun', { executionArn, event: input, definition: deps.definition })) as { runId: string; action: string; history?: unknown };
      // StartOrResume: a finished run, or one another execution drives, is NothingToDo.
      if (started.action !== 'start' && started.action !== 'resume') return;
      ({ runId, history } = started);
    } catch (failure) {
      if (caught('StartRun', failure)) return; // RunNotStarted
      throw failure;
    }
    // Where a failure caught into RecordFailure goes: the run's failure recorded, then RunFailed.
    const recordFailure = async (failure: StateFailure) => {
      try {
        await task('RecordFailure', { executionArn, runId, failure: failure.asCaught });
      } catch (error) {
        if (!caught('RecordFailure', error)) throw error;
      }
    };
    const guarded = async <T>(state: LoopState, body: () => Promise<T>): Promise<{ ok: true; value: T } | { ok: false }> => {
      try {
        return { ok: true, value: await body() };
      } catch (failure) {
        if (caught(state, failure) !== 'RecordFailure') throw failure;
        await recordFailure(failure as StateFailure);
        return { ok: false };
      }
    };
    // CallModel decides, at the execution's start and after every turn (its Choice: ToolCallsOrStop).
    for (;;) {
      const checked = await guarded('CallModel', () => callModel(executionArn, runId, history));
      if (!checked.ok) return;
      const budget = checked.value as Record<string, any>;
      history = budget['history'];
      if (budget['extension'] !== undefined) {
        const asked = await guarded('RequestBudgetExtension', async () => {
          try {
            await tokenWait('RequestBudgetExtension', { executionArn, runId, extension: budget['extension'] });
          } catch (failure) {
            if (caught('RequestBudgetExtension', failure) !== 'CallModel') throw failure;
          }
        });
        if (!asked.ok) return;
        continue;
      }
      if (budget['continue'] === false) {
        await guarded('Finalize', () => task('Finalize', { executionArn, runId, stop: budget }));
        return;
      }
      if (budget['handoff'] !== undefined) {
        try {
          await task('Handoff', { executionArn, runId, stateMachine: STATE_MACHINE, events: budget['handoff'].events });
        } catch (failure) {
          if (!caught('Handoff', failure)) throw failure; // HandoffFailed
        }
        return; // RunContinued
      }
      if (budget['compact'] !== undefined) {
        const compacted = await guarded('Compact', () => task('Compact', { executionArn, runId, turn: budget['compact'].turn, covers: budget['compact'].covers }));
        if (!compacted.ok) return;
        continue;
      }
      const pending = budget['pending'] as { turn: number; call: number }[] | null | undefined;
      // ResumeToolCalls, or ToolCallsOrStop's default: the turn CallModel made. The ToolCalls Map:
      // its Catch (States.ALL) records the run's failure; then CallModel.
      try {
        await toolCalls(executionArn, runId, pending ?? (budget['calls'] as { turn: number; call: number }[]));
      } catch (failure) {
        if (!(failure instanceof StateFailure)) throw failure;
        await recordFailure(failure);
        return;
      }
    }
  };

  /** CallModel, with its retry-after caught and waited out before deciding and calling again (ReadRetryAfter … WaitRetryAfter). */
  const callModel = async (executionArn: string, runId: string, history: unknown): Promise<unknown> => {
    for (let waits = 0; ; waits += 1) {
      try {
        return await task('CallModel', { executionArn, runId, history });
      } catch (failure) {
        if (caught('CallModel', failure) !== 'ReadRetryAfter' || waits >= MOST_WAITS) throw failure;
        await later();
      }
    }
  };

  /** One iteration of the Map: CallTool, through the approval wait, the child run's wait or the settle wait as its Catch fields say. */
  const toolCall = async (executionArn: string, runId: string, item: { turn: number; call: number }, mapFailed: () => boolean): Promise<void> => {
    let approval: unknown = false;
    for (let waits = 0; ; waits += 1) {
      const payload = { executionArn, runId, turn: item.turn, call: item.call };
      // A failed Map starts no state in its other iterations (their invocations in flight finish, as Lambda's do).
      if (mapFailed()) return;
      try {
        // Not handed CallModel's decision (`made`, in the Map's item selector), which may hand the
        // call what the turn's write left (steps/handed-step.ts): the replay's calls read. Handed,
        // a replay took 6% more CPU in memory (parsing and checking the sealed state costs more
        // than the read it saves), and the records it compares are the same either way.
        await task('CallTool', { ...payload, approval });
        return;
      } catch (failure) {
        const then = caught('CallTool', failure);
        if (then === undefined || waits >= MOST_WAITS) throw failure;
        if (mapFailed()) return;
        if (then === 'RequestApproval') {
          try {
            approval = await tokenWait('RequestApproval', payload);
          } catch (decided) {
            if (caught('RequestApproval', decided) !== 'CallTool') throw decided;
            approval = (decided as StateFailure).asCaught;
          }
        } else if (then === 'AwaitChildRun') {
          await tokenWait('AwaitChildRun', payload);
        } else {
          await later(); // WaitSettle
        }
      }
    }
  };

  /** The Map: up to `toolConcurrency` iterations at once, started in order; the first failure fails it (the others are not waited for). */
  const toolCalls = (executionArn: string, runId: string, items: readonly { turn: number; call: number }[]): Promise<void> =>
    new Promise<void>((resolve, reject) => {
      const most = deps.toolConcurrency ?? DEFAULT_TOOL_CONCURRENCY;
      let started = 0;
      let done = 0;
      let failed = false;
      const startNext = () => {
        if (failed) return;
        if (done === items.length) return resolve();
        while (started < items.length && started - done < most) {
          const item = items[started]!;
          started += 1;
          toolCall(executionArn, runId, item, () => failed).then(
            () => {
              done += 1;
              startNext();
            },
            (failure: unknown) => {
              if (failed) return;
              failed = true;
              reject(failure);
            },
          );
        }
      };
      startNext();
    });

  return {
    callbacks,
    starter,
    async run(name, input) {
      next.push({ name, input });
      try {
        for (let started = next.shift(); started; started = next.shift()) await execution(started.name, started.input);
      } catch (error) {
        if (!(error instanceof Stopped)) throw error;
      }
    },
    stop() {
      stopped = true;
      for (const [token, wait] of waiting) {
        waiting.delete(token);
        wait.reject(new Stopped());
      }
    },
    async settled() {
      while (invocations.size > 0) await Promise.allSettled([...invocations]);
    },
  };
}

/** A step's error as Lambda reports it to Step Functions: its name, and a JSON body with its message (local/engine/lambda-task.ts). */
export function lambdaFailure(thrown: unknown): StateFailure {
  const error = thrown instanceof Error ? thrown : new Error(String(thrown));
  const errorType = error.name || 'Error';
  return new StateFailure(errorType, () => JSON.stringify({ errorType, errorMessage: error.message, trace: error.stack?.split('\n') ?? [] }));
}
