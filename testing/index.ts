/**
 * savepoint/testing: run your agent in your own tests (vitest, node:test, …) on the local engine —
 * the synthesized state machine definition, the embedded ledger, the agent's simulated world or
 * your own fakes — with an injected clock, approvals you decide, and a crash at every boundary of
 * your write tools.
 *
 * ```sh
 * npm install savepoint zod
 * npm install -D aws-local-stepfunctions
 * ```
 *
 * @example
 * ```ts
 * import { test } from 'node:test';
 * import assert from 'node:assert/strict';
 * import { createTestEnvironment } from 'savepoint/testing';
 * import agent from './my-agent.dev.js';
 *
 * test('the run saves one note, approved', async () => {
 *   const env = await createTestEnvironment({ agent, approve: 'approve' });
 *   try {
 *     const run = await env.run({ inbox: 'team' });
 *     assert.equal(run.status, 'succeeded');
 *   } finally {
 *     await env.close();
 *   }
 * });
 * ```
 * @module
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { refusalOf } from '../client/runs-api-error.js';
import { loadReport, type ChildRunFigure, type RunReport } from '../lambdas/runs/report.js';
import { RunId } from '../lambdas/runs/run-request.js';
import { shownValue } from '../lambdas/shared/text.js';
import { problemsOf } from '../lambdas/shared/validation.js';
import { notAnAgent, settleMsOf, type AgentDefinition, type DevWorld } from '../lambdas/define.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
// The longest a Lambda function runs: past it, every invocation of a dead engine has timed out.
import { LAMBDA_MAX_TIMEOUT_MS } from '../lambdas/shared/limits.js';
import type { ApprovalRecord } from '../lambdas/records/ledger-records.js';
import type { Divergence, ReplayResult } from '../local/replay/index.js';
import type { Clock, Timers } from '../lambdas/shared/ports.js';
import { CrashPoint, crashInjector, TOOL_CALL_BOUNDARIES, type CrashPoint as Boundary } from '../local/runtime/crash.js';
// The local engine (and aws-local-stepfunctions, an optional peer) loads when an environment opens:
// importing savepoint/testing without the peer installed works, and opening one names the peer.
import type { LocalStack, startLocalStack } from '../local/runtime/local-stack.js';
import { requirePeer } from '../local/packages/optional-peers.js';
import { waitForRunEnd } from '../local/runtime/chain.js';
import { executionFailure } from '../local/runtime/agent-errors.js';
import { SAVEPOINT_CODE } from '../local/runtime/agents.js';

export { CrashPoint, TOOL_CALL_BOUNDARIES };
export type { ApprovalRecord, ChildRunFigure, Divergence, ReplayResult, RunReport };

/**
 * A clock a test moves by hand (Temporal's time skipping): what the harness reads for deadlines,
 * leases and wall-clock budgets, and where its timers run — a tool's `timeoutMs`, the wall-clock
 * watch on a call in flight, lease renewals, the engine's Task timeouts. They fire as the clock
 * passes them, never in real time: a hung tool is timed out by `TestEnvironment.skip`, with no
 * real wait. `skip` moves it and runs what fell due. A write waiting out its tool's settle time
 * (a send of unknown outcome, reconciled no sooner) moves it by that much on its own.
 *
 * @example
 * ```ts
 * let called!: () => void;
 * const calling = new Promise<void>((resolve) => (called = resolve));
 * const lookup = defineTool({
 *   name: 'lookup', description: 'Never answers.', input: z.object({}), effect: 'read', timeoutMs: 30_000,
 *   execute: () => (called(), new Promise(() => {})),
 * });
 * const env = await createTestEnvironment({ agent: agentWith(lookup) });
 * const run = env.start({ id: 'o-1' });
 * await calling;
 * await env.skip(30_000); // its timeout fires: the model is told `timeout`, and the run goes on
 * expect((await run.result()).status).toBe('succeeded');
 * ```
 */
export class TestClock implements Clock, Timers {
  #now: number;
  readonly #timers = new Set<{ at: number; fire: () => void }>();
  constructor(start: Date | string = '2026-01-01T00:00:00.000Z') {
    this.#now = new Date(start).getTime();
    if (Number.isNaN(this.#now)) throw new Error(`TestClock: start ${JSON.stringify(start)} is not a date`);
  }
  // Bound (arrow functions): `now: clock.now` and `after: clock.after` passed alone still work.
  /** The clock's time: it moves only by `advance`. */
  readonly now = (): Date => new Date(this.#now);
  /** Calls `fire` at the first `advance` that reaches `ms` from now (never between moves); returns the cancel. */
  readonly after = (ms: number, fire: () => void): (() => void) => {
    const timer = { at: this.#now + ms, fire };
    this.#timers.add(timer);
    return () => void this.#timers.delete(timer);
  };
  /**
   * Moves the clock forward (never back: time a run has seen cannot be undone), then fires the timers due by then, earliest first.
   * Not past the year 9999: the ledger's times are ISO strings, compared as text, and a later one (`+010000-…`) sorts before them.
   */
  readonly advance = (ms: number): void => {
    const got = shownValue(ms);
    // A string would be concatenated to the time, Infinity would make it no date: refused, not run on.
    if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) throw new Error(`TestClock.advance: ms must be a finite number ≥ 0, got ${got}`);
    if (this.#now + ms > LAST_ISO_TIME) throw new Error(`TestClock.advance: ${got} ms moves the clock past ${new Date(LAST_ISO_TIME).toISOString()}, the last time the ledger records (it is ${this.now().toISOString()})`);
    this.#now += ms;
    const due = [...this.#timers].filter((timer) => timer.at <= this.#now).sort((a, b) => a.at - b.at);
    // A timer cancelled by an earlier one's firing does not fire.
    for (const timer of due) if (this.#timers.delete(timer)) timer.fire();
  };
}

/** 9999-12-31T23:59:59.999Z: the last time whose ISO string has four digits of year. */
const LAST_ISO_TIME = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * Time skipping for the settle wait: each time an execution of `engine` enters WaitSettle (a send of
 * unknown outcome waiting out its tool's settle time), `advance` moves the clock by the seconds the
 * state waits — as that much time passes on AWS while it waits — so the run goes on at once rather
 * than in real seconds. Returns the unsubscribe.
 */
export function skipSettleWaits(engine: EngineEvents, advance: (ms: number) => void): () => void {
  return engine.on((event) => {
    if (event.type !== 'WaitStateEntered' || event.stateEnteredEventDetails?.name !== SETTLE_WAIT_STATE || event.stateEnteredEventDetails.input === undefined) return;
    const seconds = (JSON.parse(event.stateEnteredEventDetails.input) as { settle?: { seconds?: unknown } }).settle?.seconds;
    // After the Wait has begun, not inside the engine's own event.
    if (typeof seconds === 'number') setImmediate(() => advance(seconds * 1000));
  });
}

/**
 * Time skipping for a Retry's backoff: each time a state of `engine` is retried, the clock moves to
 * when the wait its Retrier asks would end on AWS (LocalEngine.onRetry: the interval, backed off,
 * at most MaxDelaySeconds), counted from the moment the retry is seen — retries seen together (a
 * turn's calls, failing at once) move it once, to the latest of them, not by their sum. The engine
 * itself waits a millisecond. Without it the clock stood still through the retries: a breaker
 * opened by a few failures (its cooldown on this clock) never cooled, every CircuitOpen retry was
 * refused, and a run with `failRate` 0.1 failed and was given up where on AWS the retries'
 * 30 s waits outlast the cooldown. Returns the unsubscribe.
 */
function skipRetryWaits(engine: { onRetry(listener: (retry: { readonly waitMs: number }) => void): () => void }, clock: TestClock): () => void {
  return engine.onRetry(({ waitMs }) => {
    const due = clock.now().getTime() + waitMs;
    // After the retry has begun, not inside the engine's own event (as skipSettleWaits).
    setImmediate(() => {
      const behind = due - clock.now().getTime();
      if (behind > 0) clock.advance(behind);
    });
  });
}

/**
 * What `skipSettleWaits` reads of an engine (a `LocalStack`'s or a `TestEnvironment`'s): its
 * history events as they happen. A shape of its own, so that the kit's public types do not reach
 * the local engine's (and through them the interpreter's, which a consumer need not install).
 */
export interface EngineEvents {
  /** Calls `listener` with each history event as it happens; returns the unsubscribe. */
  on(listener: (event: { readonly type: string; readonly stateEnteredEventDetails?: { readonly name?: string; readonly input?: string } }) => void): () => void;
}

/** infra's `States.WaitSettle`, by value (importing infra/ would load the CDK). */
const SETTLE_WAIT_STATE = 'WaitSettle';

/** How the environment answers each approval as it is requested; `undefined` leaves it pending. */
export type ApprovalAnswer = 'approve' | 'reject' | undefined;

/**
 * What `createTestEnvironment` runs: the agent, and how the environment answers for the world
 * outside. An option it does not take (a typo: `aprove`) or of the wrong type is refused, naming it.
 */
export interface TestEnvironmentOptions<World extends DevWorld = DevWorld> {
  /** The agent, with its dev parts (`withDev`) unless `world` is given and its model is not `sim:`. */
  readonly agent: AgentDefinition<any, any, World>;
  /** Your own fakes, started by you (the environment closes them). @default the agent's `dev.world` */
  readonly world?: World;
  /** The clock the engine, the ledger and the approvals run on: move it with `advance` (or the environment's `skip`). @default a new TestClock */
  readonly clock?: TestClock;
  /**
   * Answers approvals as they are requested, through the same approval API people use. A function
   * answers at once (not an async function: a promise is no answer). A function that answers
   * something else, or throws, or a decision the API refuses, rejects each run's result naming it
   * (the approval would otherwise stay pending until the test's timeout).
   * @default undefined: every approval waits for `decide`
   */
  readonly approve?: ApprovalAnswer | ((approval: ApprovalRecord) => ApprovalAnswer);
  /**
   * Where the ledger and the world keep their records: a run there survives a new environment on
   * the same directory (what `forEachCrashPoint` does). @default in memory
   */
  readonly stateDir?: string;
  /** Transient failures injected into model and provider requests. @default 0 */
  readonly failRate?: number;
  /** Seeds the injected failures and the world's randomness. @default 1 */
  readonly seed?: number;
  /**
   * The tool credentials the agent's tools read with `context.secret(name)`, by name (on AWS, the
   * construct's `toolSecrets`). @default none
   */
  readonly toolSecrets?: Readonly<Record<string, string>>;
}


/** How long an in-flight tool call's claim holds, on the test clock. */
const LEASE_MS = 1_000;

/** A finished run: how its execution ended and the ledger's report of it. */
export interface TestRun {
  /** The run's id. */
  readonly runId: string;
  /** The execution's status: `SUCCEEDED`, `FAILED`, `ABORTED`, `TIMED_OUT`. */
  readonly execution: string;
  /** The run's status in the ledger (`succeeded`, `escalated`, `failed`, `killed`, …). */
  readonly status: RunReport['status'];
  /** The ledger's report of the run: steps, tokens, tools, approvals, guards. */
  readonly report: RunReport;
}

/** How a test environment starts a run (`TestEnvironment.run`, `start`); another key (`maxSteps` beside `config`) is refused, naming it. */
export interface TestRunOptions {
  /** The run's id. @default `test-<agent>-<n>`, n counting this environment's runs */
  readonly runId?: string;
  /** Budgets and other settings of this run (RunConfig), as a run request gives them, e.g. `{ maxSteps: 3 }`. @default the agent's */
  readonly config?: Record<string, unknown>;
}

/** What `TestEnvironment.replay` replays a run on. */
export interface TestReplayOptions {
  /** The code to replay on: a changed version of the agent, to see whether it replays the run as recorded. @default the environment's agent */
  readonly agent?: AgentDefinition<any, any, any>;
}

/** A local engine for one agent in a test (`createTestEnvironment`): run it, decide its approvals, move its clock. */
export interface TestEnvironment<World extends DevWorld = DevWorld> {
  /** The agent it runs. */
  readonly agent: AgentDefinition<any, any, World>;
  /** The world the agent's tools reach: assert its side effects on it. */
  readonly world: World;
  /** The injected clock. */
  readonly clock: TestClock;
  /** The embedded ledger the runs are recorded in. */
  readonly ledger: Ledger;
  /**
   * Runs the agent on `input` until the run stops (its last execution, after any handoff, and after
   * any automatic recovery of an execution that failed or timed out: the run as it ended, resumed
   * and finished, or given up; approvals answered by `approve`, or by `decide` meanwhile). Rejects,
   * saying why, when the run did not start (an input the agent refuses, a `runId` the runs API would
   * refuse or already used).
   */
  run(input: unknown, options?: TestRunOptions): Promise<TestRun>;
  /**
   * Starts a run and returns at once; `result()` waits for its end, as `run` does. Throws, saying
   * why, for a `runId` the runs API would refuse or already used; an input the agent refuses
   * rejects `result()`.
   */
  start(input: unknown, options?: TestRunOptions): { runId: string; result(): Promise<TestRun> };
  /** The approvals waiting for a person, oldest first. */
  pendingApprovals(): Promise<ApprovalRecord[]>;
  /**
   * Resolves with the oldest approval pending that no earlier call returned, else the next one
   * requested: each approval once, so two calls take a turn's two approvals. Rejects once no run of
   * this environment is going, as none can ask for one then (rather than waiting for the test's timeout).
   */
  nextApproval(): Promise<ApprovalRecord>;
  /** Decides an approval through the approval API, as a person would. */
  decide(approvalId: string, decision: 'approve' | 'reject', reason?: string): Promise<void>;
  /** Moves the clock forward and runs what fell due (approvals past their deadline expire). */
  skip(ms: number): Promise<void>;
  /**
   * Replays a finished or stopped run of this environment on the agent's code with no live call,
   * as `savepoint replay` does: every model turn, tool result, approval and time answered from the
   * ledger, and what the agent's code decides compared as it happens (each request to the model,
   * each tool call, each approval asked for, the outcome, the report). `identical`, or the first
   * divergence: a prompt or a tool's arguments built from something else than the run's input and
   * answers (the time of day, a random id) diverges, and such a run would not replay or resume as it
   * ran. Rejects, saying why, for a run that is not there or is still running.
   * @example
   * ```ts
   * const run = await env.run({ inbox: 'team' });
   * expect((await env.replay(run.runId)).identical).toBe(true);
   * ```
   */
  replay(runId: string, options?: TestReplayOptions): Promise<ReplayResult>;
  /**
   * Stops the engine and closes the ledger and the world: call it at the end of each test. Calls
   * after the first wait for it and close nothing again. The environment's other calls reject after
   * it, saying it is closed — a run's `result()` too, so await each run's result before close.
   */
  close(): Promise<void>;
}

/**
 * Starts a local test environment for an agent: the synthesized definition on the local engine,
 * the embedded ledger (in memory unless `stateDir`), the agent's simulated world or yours, and an
 * injected clock. Close it at the end of the test. Rejects, naming the option, for an option it
 * does not take or one given wrong, before anything starts.
 */
export async function createTestEnvironment<World extends DevWorld = DevWorld>(options: TestEnvironmentOptions<World>): Promise<TestEnvironment<World>> {
  assertOptions('createTestEnvironment', options);
  return (await open(options, {})).env;
}

/**
 * The options each entry point takes: a key outside them (a typo, `aprove: 'approve'`, or a run's
 * `maxSteps` given beside `config`) is refused, naming it, rather than ignored — an `approve`
 * ignored left every approval pending, and the run waiting for the test's timeout. A `Record` over
 * the options' keys, so that an option added to the interface cannot be missed here.
 */
const ENVIRONMENT_OPTIONS: Record<keyof TestEnvironmentOptions, true> = { agent: true, world: true, clock: true, approve: true, stateDir: true, failRate: true, seed: true, toolSecrets: true };
const CRASH_MATRIX_OPTIONS: Record<keyof CrashMatrixOptions, true> = { agent: true, clock: true, approve: true, failRate: true, seed: true, toolSecrets: true, input: true, tools: true, boundaries: true, kill: true, check: true };
const RUN_OPTIONS: Record<keyof TestRunOptions, true> = { runId: true, config: true };
const REPLAY_OPTIONS: Record<keyof TestReplayOptions, true> = { agent: true };

/** Refuses options that are no object, or that name an option `caller` does not take, naming them and the ones it takes. */
function assertKnownOptions(caller: string, options: unknown, known: Record<string, true>): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) throw new TypeError(`${caller}: expected an object of options, got ${shownValue(options)}`);
  const unknown = Object.keys(options).filter((key) => !Object.hasOwn(known, key));
  if (unknown.length > 0) throw new TypeError(`${caller}: ${unknown.join(', ')}: no such option (the options are ${Object.keys(known).join(', ')})`);
}

/**
 * Refuses options without an agent made by `defineAgent` (a missing import, a module namespace), or
 * with an `approve` that is no answer (`'yes'`, `true`: the approval API would refuse it, and the
 * run would wait for a decision until the test's timeout), or an option it does not take, or one
 * of the wrong type, naming it, before anything starts.
 */
function assertOptions(caller: 'createTestEnvironment' | 'forEachCrashPoint', options: TestEnvironmentOptions | CrashMatrixOptions | undefined): void {
  // No options at all is said as the agent missing (the one option every call needs).
  if (options !== undefined) assertKnownOptions(caller, options, caller === 'createTestEnvironment' ? ENVIRONMENT_OPTIONS : CRASH_MATRIX_OPTIONS);
  const problem = notAnAgent(options?.agent);
  if (problem) throw new TypeError(`${caller}: agent: ${problem}`);
  const approve = options?.approve;
  if (approve !== undefined && approve !== 'approve' && approve !== 'reject' && typeof approve !== 'function') {
    throw new TypeError(`${caller}: approve: expected 'approve', 'reject', a function that answers each approval, or undefined (every approval waits for decide), got ${shownValue(approve)}`);
  }
  // The rest as the options' types say, named, rather than a string failRate never failing anything.
  const { failRate, seed, toolSecrets, clock } = options ?? {};
  if (failRate !== undefined && !(typeof failRate === 'number' && failRate >= 0 && failRate <= 1)) throw new TypeError(`${caller}: failRate: expected a number from 0 to 1, got ${shownValue(failRate)}`);
  if (seed !== undefined && !Number.isSafeInteger(seed)) throw new TypeError(`${caller}: seed: expected an integer, got ${shownValue(seed)}`);
  if (toolSecrets !== undefined) {
    const bad = typeof toolSecrets === 'object' && toolSecrets !== null ? Object.entries(toolSecrets).find(([, value]) => typeof value !== 'string') : undefined;
    if (typeof toolSecrets !== 'object' || toolSecrets === null || Array.isArray(toolSecrets)) throw new TypeError(`${caller}: toolSecrets: expected an object of strings by name, got ${shownValue(toolSecrets)}`);
    if (bad) throw new TypeError(`${caller}: toolSecrets.${bad[0]}: expected a string, got ${shownValue(bad[1])}`);
  }
  if (clock !== undefined && !(clock instanceof TestClock)) throw new TypeError(`${caller}: clock: expected a TestClock (new TestClock(start)), got ${shownValue(clock)}`);
  // forEachCrashPoint takes neither (refused above as no option of it).
  const { stateDir, world } = (options ?? {}) as TestEnvironmentOptions;
  if (stateDir !== undefined && typeof stateDir !== 'string') throw new TypeError(`${caller}: stateDir: expected a directory's path, got ${shownValue(stateDir)}`);
  const shape = world as { env?: unknown; close?: unknown } | null;
  if (world !== undefined && !(typeof shape?.env === 'object' && shape.env !== null && typeof shape.close === 'function')) {
    throw new TypeError(`${caller}: world: expected a world as DevWorld (an object with env and close, as the agent's dev world), got ${shownValue(world)}`);
  }
  if (caller === 'forEachCrashPoint') {
    const { check, tools, boundaries } = options as CrashMatrixOptions;
    // Before a case's engine is crashed for nothing.
    if (typeof check !== 'function') throw new TypeError(`${caller}: check: expected a function called with each case, got ${shownValue(check)}`);
    // An empty list would run no case, and a matrix whose check never ran would pass.
    for (const [name, list] of [['tools', tools], ['boundaries', boundaries]] as const) {
      if (list !== undefined && !(Array.isArray(list) && list.length > 0)) throw new TypeError(`${caller}: ${name}: expected a list of one or more (or no ${name} option: every one), got ${shownValue(list)}`);
    }
  }
}

async function open<World extends DevWorld>(
  options: TestEnvironmentOptions<World>,
  internal: { crash?: Parameters<typeof startLocalStack>[0]['crash']; decorateLedger?: (ledger: Ledger) => Ledger },
): Promise<{ env: TestEnvironment<World>; stack: LocalStack<World> }> {
  requirePeer('aws-local-stepfunctions');
  const { startLocalStack } = await import('../local/runtime/local-stack.js');
  const clock = options.clock ?? new TestClock();
  const requested: ApprovalRecord[] = [];
  const waiting = new Set<(approval: ApprovalRecord) => void>();
  // The approvals `nextApproval` has returned: each is returned once.
  const handed = new Set<string>();
  let stack: LocalStack<World> | undefined;
  const answer = (approval: ApprovalRecord): ApprovalAnswer => (typeof options.approve === 'function' ? options.approve(approval) : options.approve);
  // Set once the environment closes: a decision after it is refused, named, not a failed fetch.
  let closed: Promise<void> | undefined;
  // What `approve` answered that could not be a decision (or whose decision failed): each run's
  // result rejects with it, rather than waiting for the test's timeout on an approval left pending.
  let answerFailed!: (error: Error) => void;
  const answerFailure = new Promise<never>((_, reject) => (answerFailed = reject));
  answerFailure.catch(() => undefined);
  const decide = async (approvalId: string, decision: 'approve' | 'reject', reason = `test: ${decision}`) => {
    if (!stack) throw new Error('the test environment is not started');
    if (closed) throw new Error(`decide ${approvalId}: the test environment is closed (decide before close)`);
    const response = await fetch(`${stack.endpoints.approvals}/${encodeURIComponent(approvalId)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ decision, reason }),
    });
    if (!response.ok) throw new Error(`decide ${approvalId}: ${await refusalOf(response)} (HTTP ${response.status})`);
  };
  // After close the ledger and the engine are gone: a call says so, naming itself, rather than
  // failing inside them ("the ledger is closed", "expire-approvals not invoked").
  const assertOpen = (what: string) => {
    if (closed) throw new Error(`${what}: the test environment is closed`);
  };
  stack = await startLocalStack<World>({
    agent: options.agent,
    clock,
    retryDelayMs: 1,
    breakerRetryDelayMs: 1,
    leaseMs: LEASE_MS,
    failRate: options.failRate ?? 0,
    seed: options.seed ?? 1,
    ...(options.stateDir && { stateDir: options.stateDir }),
    ...(options.world && { world: options.world }),
    ...(options.toolSecrets && { toolSecrets: options.toolSecrets }),
    ...(internal.crash && { crash: internal.crash }),
    ...(internal.decorateLedger && { decorateLedger: internal.decorateLedger }),
    onApproval: (approval) => {
      requested.push(approval);
      for (const wake of [...waiting]) wake(approval);
      let decision: ApprovalAnswer;
      try {
        decision = answer(approval);
        // An async function's answer is a promise, which shownValue would show as "an object with no keys".
        const got = typeof (decision as { then?: unknown } | undefined)?.then === 'function' ? 'a promise (approve answers at once: no async function; decide later with decide)' : shownValue(decision);
        if (decision !== undefined && decision !== 'approve' && decision !== 'reject') throw new TypeError(`expected 'approve', 'reject' or undefined (leave it to decide), got ${got}`);
      } catch (error) {
        return answerFailed(new Error(`approve: answering approval ${approval.approvalId} (${approval.toolName}): ${(error as Error).message}`, { cause: error }));
      }
      // Decided after the step that asked has returned, as a person would.
      if (decision) {
        setImmediate(() => void decide(approval.approvalId, decision).catch((error: unknown) => answerFailed(new Error(`approve: ${decision} of approval ${approval.approvalId} failed: ${(error as Error).message}`, { cause: error }))));
      }
    },
  });
  const started = stack;
  // A send waiting out its settle time, and a Retry's backoff, move the test's clock by that much (time skipping).
  const stopSkippingSettles = skipSettleWaits(started.engine, clock.advance);
  const stopSkippingRetries = skipRetryWaits(started.engine, clock);
  const stopSkipping = () => (stopSkippingSettles(), stopSkippingRetries());
  let runs = 0;
  // The runs started here that are still going (a run's end: its last execution, after any
  // handoff), and what waits for an approval, told when none is left to ask for one.
  let going = 0;
  const whenIdle = new Set<() => void>();
  const start = (input: unknown, runOptions: TestRunOptions = {}) => {
    assertKnownOptions('run', runOptions, RUN_OPTIONS);
    const runId = runOptions.runId ?? `test-${options.agent.name}-${++runs}`;
    // A run id the runs API would refuse is refused here, naming the option, rather than by the
    // engine's StartExecution (`Invalid Name`) or as a failed execution.
    const badRunId = RunId().safeParse(runId);
    if (!badRunId.success) throw new Error(`run ${JSON.stringify(runId)} did not start: runId: ${problemsOf(badRunId.error)}`);
    assertOpen(`run ${runId} did not start`);
    let executionArn: string;
    try {
      ({ executionArn } = started.engine.startExecution({ name: runId, input: { runId, input, ...(runOptions.config && { config: runOptions.config }) } }));
    } catch (error) {
      throw new Error(`run ${runId} did not start: ${(error as Error).message}`, { cause: error });
    }
    going += 1;
    const ended = waitForRunEnd(started.engine, started.ledger, runId, executionArn);
    void ended
      .catch(() => undefined)
      .finally(() => {
        going -= 1;
        for (const idle of [...whenIdle]) idle();
      });
    const result = async (): Promise<TestRun> => {
      try {
        assertOpen(`result of run ${runId}`);
        return await finished(started, runId, await Promise.race([ended, answerFailure]), clock);
      } catch (error) {
        // Closed while it waited: the ledger and engine are gone, said as that rather than as "the ledger is closed".
        if (closed) throw new Error(`result of run ${runId}: the test environment is closed (await each run's result before close)`, { cause: error });
        throw error;
      }
    };
    return { runId, result };
  };
  const env: TestEnvironment<World> = {
    agent: options.agent,
    world: started.world,
    clock,
    ledger: started.ledger,
    start,
    // A promise that rejects (never a throw) for a run that does not start, as its doc says.
    run: async (input, runOptions) => start(input, runOptions).result(),
    pendingApprovals: async () => (assertOpen('pendingApprovals'), started.ledger.listPendingApprovals()),
    nextApproval: () =>
      new Promise<ApprovalRecord>((resolve, reject) => {
        assertOpen('nextApproval');
        // Each approval once, oldest first: two calls in a row take two approvals (a turn's two
        // writes), not the first one twice while it waits for `decide`.
        let settled = false;
        const settle = (then: () => void) => {
          if (settled) return;
          settled = true;
          waiting.delete(wake);
          whenIdle.delete(idle);
          then();
        };
        const take = (approval: ApprovalRecord) => settle(() => {
          handed.add(approval.approvalId);
          resolve(approval);
        });
        // No run can ask for one: said now, not left to the test's timeout.
        const none = () => settle(() => reject(new Error('nextApproval: no run of this environment is going, and none asked for an approval (start a run, or look at its result)')));
        const wake = (approval: ApprovalRecord) => {
          if (!handed.has(approval.approvalId)) take(approval);
        };
        const idle = () => {
          if (going === 0) none();
        };
        // Listening before the read: an approval requested while the ledger is read is not missed.
        waiting.add(wake);
        whenIdle.add(idle);
        started.ledger.listPendingApprovals().then((pending) => {
          const first = pending.find((approval) => !handed.has(approval.approvalId));
          if (first) take(first);
          else if (going === 0) none();
        }, (error: unknown) => settle(() => reject(error)));
      }),
    decide,
    skip: async (ms) => {
      assertOpen('skip');
      clock.advance(ms);
      await started.expireApprovals();
    },
    replay: async (runId, replayOptions = {}) => {
      assertOpen('replay');
      assertKnownOptions('replay', replayOptions, REPLAY_OPTIONS);
      const problem = replayOptions.agent === undefined ? undefined : notAnAgent(replayOptions.agent);
      if (problem) throw new TypeError(`replay: agent: ${problem}`);
      // Loaded when a test replays: the replay's modules are no part of an environment's start.
      const { replayRun } = await import('../local/replay/index.js');
      return replayRun({ agent: replayOptions.agent ?? options.agent, source: started.ledger, runId });
    },
    // Once, however often it is called (in the test's `finally` and its `afterEach`).
    close: () =>
      (closed ??= (async () => {
        stopSkipping();
        await started.close();
        // The stack closes a world it made itself (the agent's dev world); one given here is closed
        // here. Either way once: a world that closes a file cannot close it twice.
        if (options.world) await options.world.close();
      })()),
  };
  return { env, stack: started };
}

/** `execution`: how the run's last execution ended (`ExecutionDescription`), or why there was none. */
async function finished(stack: LocalStack<any>, runId: string, execution: { status: string; error?: string; cause?: string }, clock: Clock): Promise<TestRun> {
  const report = await loadReport(stack.ledger, runId, clock.now(), stack.agent);
  // StartRun refused it (input the agent refuses, say): why, as the engine said it.
  if (!report) throw new Error(`run ${runId} did not start (execution ${execution.status}): ${executionFailure(execution.error, execution.cause, SAVEPOINT_CODE)}`);
  return { runId, execution: execution.status, status: report.status, report };
}

/** One case of the crash matrix: where the engine died, and the run the next engine finished. */
export interface CrashCase<World extends DevWorld = DevWorld> {
  /** The write tool whose call the engine died in. */
  readonly tool: string;
  /** Where in the call it died (`TOOL_CALL_BOUNDARIES`). */
  readonly boundary: Boundary;
  /** The run, finished by a new engine on the same state (ledger and world) after the crash. */
  readonly run: TestRun;
  /** The world as the run left it: assert each side effect happened once. */
  readonly world: World;
}

/** What `forEachCrashPoint` takes: the environment's options (on a state directory of its own per case) and the matrix. */
export interface CrashMatrixOptions<World extends DevWorld = DevWorld> extends Omit<TestEnvironmentOptions<World>, 'stateDir' | 'world'> {
  /** The input of every case's run. */
  readonly input: unknown;
  /** The tools whose first call each case crashes in: one or more (an empty list is refused: it would run no case). @default every `write` tool of the agent */
  readonly tools?: readonly string[];
  /** The boundaries each tool's call is crashed at: one or more (an empty list is refused). @default TOOL_CALL_BOUNDARIES */
  readonly boundaries?: readonly Boundary[];
  /**
   * Kill a real process: the dying engine is a `savepoint run` child process on this agent module
   * (a path from the working directory, or a file URL: the file the CLI loads, its dev module found beside it, as `npx savepoint run --agent` does),
   * ended with SIGKILL at the boundary by the CLI's `--crash-at`; the new engine resumes the run in
   * this process, on the same state directory. A side effect must then be visible across processes:
   * kept by the agent's world in its state directory (a journal, as a provider keeps its records),
   * not in this process's memory. The dead process ran on the system clock, so the new engine's
   * clock starts where its claims ran out (`clock` is refused), and `approve` is a fixed answer.
   * @default undefined: the engine dies in this process (nothing it would write or send after the boundary happens)
   */
  readonly kill?: { readonly agentModule: string | URL };
  /** Called with each case, while its world is still open. */
  readonly check: (crash: CrashCase<World>) => void | Promise<void>;
}

/**
 * The crash matrix over your own write tools: for each tool and each boundary of its first call,
 * a fresh run whose engine dies there — every ledger write and outside call after that moment
 * never happens, as when a process is killed (or a real process is killed: `kill`) — and a new
 * engine on the same ledger and world resumes it to the end. `check` asserts what must hold (each
 * side effect once) on each case. The dying engine runs on a clock of its own from `clock`'s time
 * (on it, its invocations left in flight run out their function timeouts); `clock` then moves on
 * by the time it lived and a claim's lease, and the new engine runs on it. An approval `approve`
 * leaves pending rejects the matrix, naming it: nobody else can decide it. An option it does not
 * take, a `check` that is no function or an empty `tools` or `boundaries` is refused, named,
 * before any case runs.
 */
export async function forEachCrashPoint<World extends DevWorld = DevWorld>(options: CrashMatrixOptions<World>): Promise<CrashCase<World>[]> {
  assertOptions('forEachCrashPoint', options);
  // Before a state directory is made or a process killed (open() checks again).
  requirePeer('aws-local-stepfunctions');
  const writes = options.agent.tools.filter((tool) => tool.effect === 'write').map((tool) => tool.name);
  const tools = options.tools ?? writes;
  if (tools.length === 0) throw new Error(`forEachCrashPoint: agent ${options.agent.name} has no write tool`);
  for (const tool of tools) if (!writes.includes(tool)) throw new Error(`forEachCrashPoint: tools: ${JSON.stringify(tool)} is not a write tool of ${options.agent.name} (${writes.join(', ')})`);
  for (const boundary of options.boundaries ?? []) {
    if (!TOOL_CALL_BOUNDARIES.includes(boundary)) throw new Error(`forEachCrashPoint: boundaries: ${JSON.stringify(boundary)} is not a boundary of a tool call (${TOOL_CALL_BOUNDARIES.join(', ')})`);
  }
  if (options.kill) {
    const module = modulePathOf(options.kill.agentModule);
    if (!existsSync(module)) throw new Error(`forEachCrashPoint: kill.agentModule: no file ${module} (the agent's module, which the killed process runs)`);
    if (options.clock) throw new Error('forEachCrashPoint: clock: a killed process runs on the system clock, so kill takes no clock (the new engine starts where the dead one\'s claims ran out)');
    if (typeof options.approve === 'function') throw new Error("forEachCrashPoint: approve: the killed process answers approvals with a fixed 'approve' or 'reject', not a function");
  }
  const cases: CrashCase<World>[] = [];
  for (const tool of tools) {
    for (const boundary of options.boundaries ?? TOOL_CALL_BOUNDARIES) {
      const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-crash-'));
      try {
        const runId = `crash-${tool}-${boundary}`.replace(/[^A-Za-z0-9_-]/g, '-');
        if (options.kill) {
          await killedAt(options, options.kill.agentModule, { stateDir, runId, tool, boundary });
          // The new engine starts after the dead process's claims ran out, and its sends settled (on its clock, the system's).
          const clock = new TestClock(new Date(Date.now() + takeoverMs(options.agent, tool) + 1));
          cases.push(await resumed(options, { stateDir, runId, tool, boundary, clock }));
          continue;
        }
        const clock = options.clock ?? new TestClock();
        // The dying engine runs on a clock of its own, from the same moment: its invocations left in
        // flight are ended on it below, and the user's clock moves only as a restart would see it.
        const dyingClock = new TestClock(clock.now());
        const born = dyingClock.now().getTime();
        let dead = false;
        let onDeath!: () => void;
        const crashed = new Promise<void>((resolve) => (onDeath = resolve));
        // After the crash nothing of the dead engine reaches the ledger or the world again.
        const never = () => new Promise<never>(() => undefined);
        const answers = answeredOrStalled(options.approve, runId);
        const { env: dying, stack: dyingStack } = await open({ ...options, clock: dyingClock, approve: answers.approve, stateDir }, {
          crash: crashInjector({ at: { point: boundary, tool, nth: 1 } }, (point) => {
            dead = true;
            onDeath();
            throw new Error(`crash injected at ${point}`);
          }),
          decorateLedger: (ledger) => new Proxy(ledger, { get: (target, key, receiver) => (dead ? never : Reflect.get(target, key, receiver)) }) as Ledger,
        });
        const ended = dying.start(options.input, { runId }).result();
        try {
          await Promise.race([
            crashed,
            ended.then((run) => {
              if (!dead) throw new Error(`forEachCrashPoint: run ${runId} ended (${run.status}) without reaching ${boundary} of ${tool}`);
            }),
            answers.stalled,
          ]);
        } catch (error) {
          // The case ends here: its engine is stopped, not left running behind the error.
          await dying.close().catch(() => undefined);
          throw error;
        }
        const lived = dyingClock.now().getTime() - born;
        // The dead engine's invocations still in flight (held by its dead ledger) end at their
        // function's timeout, on its clock, as a Lambda's would: the stack's close drains them then.
        // The engine first, so that none is retried.
        await dyingStack.engine.close();
        dyingClock.advance(LAMBDA_MAX_TIMEOUT_MS);
        await dying.close().catch(() => undefined);
        // The new engine starts after the dead one's claims ran out, as a restarted process does:
        // the time the dead engine lived, and a lease — or the tool's settle time, when longer
        // (a send of unknown outcome is reconciled no sooner: protocol.ts takeoverAfter).
        clock.advance(lived + takeoverMs(options.agent, tool) + 1);
        cases.push(await resumed(options, { stateDir, runId, tool, boundary, clock }));
      } finally {
        rmSync(stateDir, { recursive: true, force: true });
      }
    }
  }
  return cases;
}

/** How long after a crash a call of `tool` may be taken over: its lease, or its settle time from the send when longer. */
function takeoverMs(agent: AgentDefinition<any, any, any>, toolName: string): number {
  const tool = agent.tools.find((candidate) => candidate.name === toolName);
  return Math.max(LEASE_MS, tool?.reconcile ? settleMsOf(tool) : 0);
}

/**
 * `approve` as a function that also tells `stalled` of an approval it leaves pending: in a crash
 * matrix nobody else can decide one (its runs are the matrix's own), so its case would otherwise
 * wait for the test's timeout, saying nothing.
 */
function answeredOrStalled(approve: CrashMatrixOptions['approve'], runId: string): { approve: (approval: ApprovalRecord) => ApprovalAnswer; stalled: Promise<never> } {
  let stall!: (error: Error) => void;
  const stalled = new Promise<never>((_resolve, reject) => (stall = reject));
  // Raced against the run: a case that ends otherwise leaves it pending, never unhandled.
  stalled.catch(() => undefined);
  return {
    stalled,
    approve: (approval) => {
      const answer = typeof approve === 'function' ? approve(approval) : approve;
      if (answer === undefined) {
        stall(new Error(`forEachCrashPoint: run ${runId} waits for a person (approval of ${approval.toolName}: ${JSON.stringify(approval.summary)}), which nobody can decide in a crash matrix: pass approve: 'approve' or 'reject' (or a function that answers each approval)`));
      }
      return answer;
    },
  };
}

/** A new engine on the crashed run's state directory: the watchdog resumes the orphaned run, and `check` sees how it ended. */
async function resumed<World extends DevWorld>(
  options: CrashMatrixOptions<World>,
  at: { stateDir: string; runId: string; tool: string; boundary: Boundary; clock: TestClock },
): Promise<CrashCase<World>> {
  const answers = answeredOrStalled(options.approve, at.runId);
  const { env: next, stack } = await open({ ...options, approve: answers.approve, clock: at.clock, stateDir: at.stateDir }, {});
  try {
    const run = await Promise.race([resumeOrphan(stack, at.runId, at.clock), answers.stalled]);
    const crash = { tool: at.tool, boundary: at.boundary, run, world: next.world };
    await options.check(crash);
    return crash;
  } finally {
    await next.close();
  }
}

/**
 * Runs the agent in a `savepoint run` child process (the package's own CLI) that the crash
 * injection ends with SIGKILL at the boundary of the tool's first call; fails when it ended any
 * other way, with what it printed.
 */
async function killedAt(options: CrashMatrixOptions<any>, agentModule: string | URL, at: { stateDir: string; runId: string; tool: string; boundary: Boundary }): Promise<void> {
  const cli = join(dirname(createRequire(import.meta.url).resolve('savepoint/package.json')), 'bin', 'savepoint.js');
  const args = [
    cli, 'run', '--agent', modulePathOf(agentModule), '--state-dir', at.stateDir, '--run-id', at.runId, '--input', JSON.stringify(options.input),
    '--crash-at', `${at.boundary}:${at.tool}`, '--fail-rate', String(options.failRate ?? 0), '--seed', String(options.seed ?? 1),
    '--approve', typeof options.approve === 'string' ? options.approve : 'wait', '--json',
  ];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((done, fail) => {
    child.once('error', fail);
    child.once('close', (exitCode, exitSignal) => done([exitCode, exitSignal]));
  });
  if (signal === 'SIGKILL' && stderr.includes(`crash injected at ${at.boundary}`)) return;
  const how = signal ? `was ended by ${signal}` : code === 0 ? `ended without reaching ${at.boundary} of ${at.tool}` : `exited ${code}`;
  throw new Error(`forEachCrashPoint: the engine process of run ${at.runId} ${how}:\n${stderr.trim().split('\n').slice(-20).join('\n')}`);
}

/** The path of the agent's module a killed process runs (a file URL, or a path from the working directory). */
const modulePathOf = (agentModule: string | URL) => (agentModule instanceof URL ? fileURLToPath(agentModule) : resolve(agentModule));

/** What an engine does when it starts after a crash: the watchdog resumes the run, and the test waits for its end. */
async function resumeOrphan(stack: LocalStack<any>, runId: string, clock: Clock): Promise<TestRun> {
  const results = await stack.recoverOrphans();
  const resumed = results.find((result) => result.runId === runId);
  if (resumed?.action === 'recovered') {
    return finished(stack, runId, await waitForRunEnd(stack.engine, stack.ledger, runId, resumed.executionArn), clock);
  }
  // Nothing to resume: the crash came after the run's last write (or before its first), and the
  // ledger says how it ended.
  return finished(stack, runId, { status: resumed ? `not resumed: ${resumed.reason}` : 'not running' }, clock);
}
