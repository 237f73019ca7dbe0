import * as z from 'zod';
import { killChildren } from './child-tree.js';
import type { ChildStarter } from '../tools/child-runs.js';
import type { Identity } from '../approvals/policy.js';
import type { Ledger } from '../ledger/ledger.js';
import { runIdPruned } from '../ledger/pruning.js';
import type { ApprovalRecord, RunRecord } from '../records/ledger-records.js';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import { timersOf, type Clock } from '../shared/ports.js';
import type { AgentDefinition } from '../define.js';
import { parseOrThrow } from '../shared/validation.js';
import { LIFECYCLES, lifecycleOf, SEEN_LIFECYCLE_HEADER, STATUS_FILTERS, TERMINAL_LIFECYCLES, type Lifecycle } from './lifecycle.js';
import { loadReport, type RunReport } from './report.js';
import { KillReason, modelSpecOf, otherRequestProblem, RunId, runIdOf } from './run-request.js';
import { forkRunIdTaken, isSameFork, parentRunning } from './fork.js';
import { createStartRoute, StarterRefused, StartRunBody, type StartRouteDeps } from './start-route.js';
import { decodeCursor, encodeCursor, newestFirst } from './run-pages.js';
import { starterPerson } from '../approvals/people.js';
import { createBatchRoutes, type BatchStore, type ManifestReader } from './batch.js';
import { runWatches, type RecordedRuns } from './run-writes.js';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { settledChildRefusal } from '../records/child-budget.js';

/**
 * The runs API (`/v1/runs`), one set of routes for `savepoint serve` and a deployed stack
 * (adapters/runs-http.ts serves them as API Gateway proxy events):
 *
 *   POST /runs                  start a run (202, `Location`); idempotent on its run id
 *   GET  /runs/{runId}          the run: report, lifecycle, waiting approvals, a poll hint;
 *                               `?wait=<s>` long-polls until its lifecycle changes (capped), from
 *                               the one its caller read when it names it (SEEN_LIFECYCLE_HEADER)
 *   GET  /runs?agent=&status=&cursor=&limit=   newest first, paged by an opaque cursor
 *   POST /runs/{runId}/cancel   `{"reason"?}`: a kill recorded with the caller as who asked
 *
 * What idempotent means here: a run request names its run (its `runId`, or the agent's run id of
 * its input); when the ledger already holds that run, nothing starts and the answer is that run.
 * A run whose execution failed for good is the exception: the request resumes it (a new execution
 * of the same run, as `savepoint resume` does). A request that names its execution
 * (`executionName`: the CLI's own `run` / `resume`) always starts one, as `POST /runs` did.
 */

/** How long a long-poll may wait at most: under API Gateway's 29 s integration timeout, with the function's own margin. */
export const MAX_WAIT_SECONDS = 20;
/** What a poller is told to wait between two reads of a live run (`Retry-After`, `pollAfterSeconds`). */
export const POLL_AFTER_SECONDS = 2;
/** How often a long-poll reads the run again. */
const LONG_POLL_EVERY_MS = 1_000;
/** Left of the function's time when a long-poll answers, whatever it was asked: the answer still has to reach the caller. */
const ANSWER_MARGIN_MS = 2_000;
/**
 * How long a start waits for StartRun to record its run, and how often it reads it meanwhile: on AWS
 * StartExecution answers before the execution's first state runs, and StartRun (a Lambda
 * invocation: ~0.1-1 s, more on a cold start) records the run after it.
 */
const RECORD_WAIT_MS = 5_000;
const RECORD_POLL_MS = 100;
/** Runs read for one page of `GET /v1/runs`, newest first from the cursor (each one a GetItem on DynamoDB). */
const LIST_READ_LIMIT = 1_000;

/** `POST /v1/runs`: a run request, and the agent it is for (the one this API runs, when named). */
export const StartRunV1Body = schemaOnFirstUse(() => StartRunBody().extend({ agent: z.string().min(1).max(200).optional() }).strict());
export type StartRunV1Body = z.infer<ReturnType<typeof StartRunV1Body>>;

export const CancelBody = z.object({ reason: KillReason().optional() }).strict();

export const ListQuery = z
  .object({
    agent: z.string().min(1).max(200).optional(),
    // One enum, not a union of two: a refusal then lists every status and lifecycle it takes.
    status: z.enum(STATUS_FILTERS).optional(),
    cursor: z.string().min(1).max(1_000).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
  })
  .strict();

export const GetQuery = z.object({ wait: z.coerce.number().int().min(0).max(3_600).optional() }).strict();

const SeenLifecycle = z.enum(LIFECYCLES);

/** What wakes a long-poll besides its ticks. */
export interface LongPollDeps {
  /** The ledger's writes in this process (the local engine's): a long-poll reads its run again as it is written. @default none: at its ticks only (runs/run-writes.ts) */
  recorded?: RecordedRuns;
}

/**
 * The runs API over a ledger that no engine drives (a state directory read in process:
 * local/services/state-dir-api.ts): it reads runs, lists every agent's, and records a cancel;
 * a start is refused (NoEngine), for there is nothing to run it.
 */
export interface RunsReaderDeps extends LongPollDeps {
  /** The ledger, as the runs API's role reaches it. */
  ledger: Ledger;
  clock: Clock;
  /** The agent a run's report is summarized by, from its name (undefined: the report goes without the agent's own summary). */
  agentOf: (name: string) => Promise<AgentDefinition | undefined>;
  /** Where to start an engine, for the refusal of a start. */
  engineHint: string;
}

export interface RunsApiDeps extends StartRouteDeps, LongPollDeps {
  /** The ledger as the runs API's role reaches it: reads runs and their records, records a kill. */
  ledger: Ledger;
  /** Stops an execution now (`StopExecution`): a cancelled run that waits for a person stops at once rather than at its deadline. */
  stop?: (executionArn: string, error: string, cause: string) => Promise<void>;
  /** Stops the executions of a cancelled run's child runs (runs/child-tree.ts). @default none: their kills are recorded, and they stop at their next step */
  children?: Pick<ChildStarter, 'stop'>;
  /** Where batches start (`POST /batches`: lambdas/runs/batch.ts), and the ARN of the agent's item function their Tasks invoke. @default none: the batch routes answer 404 */
  batches?: { store: BatchStore; itemFunction: string; readManifest?: ManifestReader };
  /** Seconds a batch's item waits between two reads of its run. @default BATCH_POLL_SECONDS */
  batchPollSeconds?: number;
}

/** A run as the runs API answers it. */
export interface RunResource {
  runId: string;
  agent: string;
  lifecycle: Lifecycle;
  report: RunReport;
  approvals: ApprovalRecord[];
  /** Read the run again after this many seconds (also the `Retry-After` header); absent once it has ended. */
  pollAfterSeconds?: number;
}

/** What `POST /v1/runs` answers (the client's `StartedRun`): the run it started, or the one that already had this run id. */
export interface RunAccepted {
  /** The run's id. */
  runId: string;
  /** The agent that runs it. */
  agent: string;
  /** The execution that runs it (the one it already had, when nothing was started). */
  executionArn: string;
  /** Who started it, as the API authenticated the caller. */
  startedBy?: string;
  /** Where the run is: `working` for a run just started. */
  lifecycle: Lifecycle;
  /** False when the run id named a run that existed: nothing was started. */
  created: boolean;
}

/** One run of a listing (`GET /v1/runs`). */
export interface RunSummary {
  /** The run's id. */
  runId: string;
  /** The agent that runs it. */
  agent: string;
  /** savepoint's own status: `running`, `succeeded`, `stopped`, `killed` or `failed`. */
  status: RunRecord['status'];
  /** The status in MCP Tasks' states. */
  lifecycle: Lifecycle;
  /** When the run was first started (ISO 8601). */
  createdAt: string;
  /** When it ended (ISO 8601). */
  finishedAt?: string;
  /** Who started it, when the API that started it proved who. */
  startedBy?: string;
  /** Agent steps taken so far. */
  steps: number;
  /** Dollars spent so far. */
  dollars: number;
  /** The execution that drives (or drove) it. */
  executionArn: string;
}

/** A page of runs (`GET /v1/runs`). */
export interface RunsPage {
  runs: RunSummary[];
  nextCursor?: string;
  /** Runs of this page's read whose record fails verification: named, not listed (nothing in them can be trusted; `savepoint verify <runId>`). */
  damaged?: { runId: string; error: string }[];
}

/** A start refused because no engine runs where the API reads (503): nothing could run it. */
export class NoEngine extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'NoEngine';
  }
}

/**
 * A request the run's state refuses, answered with the run: a cancel of a run that has ended, a
 * start under a run id that another request started. Invalid input like any (never retried; a
 * batch's item is refused for it), which the HTTP API answers 409.
 */
export class RunConflict extends InvalidInputError {
  constructor(
    message: string,
    readonly run: RunResource,
    /**
     * A cancel's of a run that was killed: whether the kill recorded is the caller's (the person
     * the API took the caller for). A client that asked again after its connection dropped tells
     * by it its own first cancel that landed (client/connect.ts `cancel`).
     */
    readonly killedByCaller?: boolean,
  ) {
    super(message);
  }
}

/** Where a run is, as a long-poll compares it: its lifecycle, and the ids of the approvals it waits for. */
interface WaitState {
  lifecycle: Lifecycle;
  waitsFor: string;
}
const waitsFor = (approvals: readonly ApprovalRecord[]) => approvals.map((approval) => approval.approvalId).join();

export function createRunsRoutes(deps: RunsApiDeps | RunsReaderDeps) {
  // Serving: this API's agent runs what it starts. Reading: no engine, every agent's runs.
  const serving = 'start' in deps ? deps : undefined;
  const startRoute = serving && createStartRoute(serving);
  const reading = 'start' in deps ? undefined : deps;
  // The agent whose summary a run's report carries (loadReport uses it only for its own runs).
  const agentOf = async (runId: string): Promise<AgentDefinition | undefined> => {
    if (!reading) return serving!.agent;
    const run = await deps.ledger.getRun(runId);
    return run && reading.agentOf(run.agent);
  };
  const watch = runWatches(deps.recorded, timersOf(deps.clock));

  const pendingOf = async (runId: string) => (await deps.ledger.listPendingApprovals()).filter((approval) => approval.runId === runId);

  /** What a long-poll waits on to move: the run's lifecycle, and the approvals it waits for (undefined: no such run). */
  const stateOf = async (runId: string): Promise<WaitState | undefined> => {
    const run = await deps.ledger.getRun(runId);
    if (!run) return undefined;
    const approvals = await pendingOf(runId);
    return { lifecycle: lifecycleOf(run.status, approvals.length, run.error), waitsFor: waitsFor(approvals) };
  };

  const read = async (runId: string): Promise<RunResource | undefined> => {
    const report = await loadReport(deps.ledger, runId, deps.clock.now(), await agentOf(runId));
    if (!report) return undefined;
    const approvals = await pendingOf(runId);
    const lifecycle = lifecycleOf(report.status, approvals.length, report.error);
    return { runId, agent: report.agent, lifecycle, report, approvals, ...(!TERMINAL_LIFECYCLES.includes(lifecycle) && { pollAfterSeconds: POLL_AFTER_SECONDS }) };
  };

  /** `seenLifecycle`: the lifecycle the caller last read (SEEN_LIFECYCLE_HEADER); the long-poll waits from there. */
  const get = async (rawRunId: string, rawQuery: unknown, remainingMs = Number.POSITIVE_INFINITY, rawSeenLifecycle?: string): Promise<RunResource> => {
    const runId = parseOrThrow(RunId(), rawRunId, 'runId');
    const { wait = 0 } = parseOrThrow(GetQuery, rawQuery ?? {}, 'query');
    const seenLifecycle = rawSeenLifecycle === undefined ? undefined : parseOrThrow(SeenLifecycle, rawSeenLifecycle, SEEN_LIFECYCLE_HEADER);
    // Watched from before the first read: a write while it reads is not left to the next tick.
    const writes = wait > 0 ? watch(runId) : undefined;
    try {
      const first = await read(runId);
      if (!first) throw new NotFoundError(`runId: no run ${runId}`);
      // A long-poll answers when the run moves on (its lifecycle, or the approvals it waits for), or
      // when its wait is over: at most MAX_WAIT_SECONDS, and never past the function's own time.
      // Moved on from the lifecycle the caller read, when it names one: it may have moved before this read.
      const until = deps.clock.now().getTime() + Math.min(wait * 1_000, MAX_WAIT_SECONDS * 1_000, Math.max(0, remainingMs - ANSWER_MARGIN_MS));
      const from = { lifecycle: seenLifecycle ?? first.lifecycle, waitsFor: waitsFor(first.approvals) };
      const moved = (state: WaitState) => TERMINAL_LIFECYCLES.includes(state.lifecycle) || state.lifecycle !== from.lifecycle || state.waitsFor !== from.waitsFor;
      if (!writes || moved({ lifecycle: first.lifecycle, waitsFor: from.waitsFor })) return first;
      // Each tick, and each write of the run in this process, reads only what a move changes (the
      // run's record, the approvals waiting); the whole run once, for the answer.
      for (;;) {
        const left = until - deps.clock.now().getTime();
        if (left <= 0) break;
        await writes.next(Math.min(LONG_POLL_EVERY_MS, left));
        const state = await stateOf(runId);
        if (state && moved(state)) break;
      }
      return (await read(runId)) ?? first;
    } finally {
      writes?.close();
    }
  };

  /** A start answered with the run its request names already (nothing started). */
  const answered = async (runId: string, existing: RunRecord): Promise<RunAccepted> => {
    const view = (await read(runId))!;
    return { runId, agent: existing.agent, executionArn: existing.executionArn, ...(existing.startedBy && { startedBy: existing.startedBy }), lifecycle: view.lifecycle, created: false };
  };

  const start = async (caller: Identity, body: unknown): Promise<RunAccepted> => {
    if (!serving || !startRoute) throw new NoEngine(`start: no engine runs here to start a run: ${reading!.engineHint}`);
    const deps = serving;
    const request = parseOrThrow(StartRunV1Body(), body, 'run request');
    const { agent, ...rest } = request;
    if (agent !== undefined && agent !== deps.agent.name) throw new InvalidInputError(`agent: no agent ${agent} here (this API runs ${deps.agent.name})`);
    // Idempotent on the run id, unless the caller names the execution it starts (the CLI's run and resume).
    if (rest.executionName === undefined) {
      const input = parseOrThrow(deps.agent.input, rest.input, `input of agent ${deps.agent.name}`);
      const runId = parseOrThrow(RunId(), rest.runId ?? runIdOf(deps.agent, input), 'runId');
      const existing = await deps.ledger.getRun(runId);
      // A pruned run's id is refused here, as StartRun would refuse it, before an execution starts and fails.
      const pruned = existing ? undefined : await deps.ledger.prunedRun(runId);
      if (pruned) throw runIdPruned(runId, pruned.prunedAt);
      // The agents of a stack share its ledger: a run id is one run, of one agent.
      if (existing && existing.agent !== deps.agent.name) throw new InvalidInputError(`runId: run ${runId} is a run of agent ${existing.agent}, not ${deps.agent.name}`);
      if (rest.fork !== undefined) {
        // A fork is a run of its own: under a run id the ledger holds, StartRun refuses it (it takes
        // only a retry of its own execution). The same fork asked for again is answered as it is;
        // any other is refused here with the run, and nothing starts — not a 202 whose execution
        // fails while a wait on the id finds the other run. (Under its parent's own id, the start route says so.)
        if (existing && runId !== rest.fork.from) {
          const model = rest.model === undefined ? undefined : modelSpecOf(rest.model, 'model');
          if (!isSameFork(existing, { fork: rest.fork, input, model })) throw new RunConflict(forkRunIdTaken(runId).message, (await read(runId))!);
          return answered(runId, existing);
        }
        // A parent still running is refused with the parent (StartRun refuses it too: forkPrefix).
        const parent = await deps.ledger.getRun(rest.fork.from);
        if (parent?.status === 'running' && parent.agent === deps.agent.name) throw new RunConflict(parentRunning(parent.runId).message, (await read(parent.runId))!);
      } else {
        // The same request again answers the run; another one under its id is refused, not
        // answered with a run it did not ask for (StartRun refuses it too, once its execution runs).
        const other = existing && otherRequestProblem(existing, { input, model: rest.model === undefined ? undefined : modelSpecOf(rest.model, 'model') });
        if (other) throw new RunConflict(other.message, (await read(runId))!);
        if (existing && existing.status !== 'failed') return answered(runId, existing);
        // A failed child settled into its parent is not resumed (StartRun refuses it too): said here, nothing started.
        if (existing?.settledIntoParentAt !== undefined) throw new RunConflict(settledChildRefusal(existing), (await read(runId))!);
      }
    }
    // The body as sent (less the agent): StartRun's budgets are the ones the caller named, and the
    // parsed request has every budget filled in with RunConfig's defaults.
    const { agent: _named, ...sent } = body as Record<string, unknown>;
    const started = await startRoute(caller, sent);
    await untilRecorded(started.runId);
    return { ...started, agent: deps.agent.name, lifecycle: 'working', created: true };
  };

  /**
   * Until StartRun has recorded the run a start started, at most RECORD_WAIT_MS: a read of the run
   * the 202 names (its Location; a client's `wait` or `events` right after its `start`) found no run
   * and answered 404 while StartRun had still to run. Past the bound the start answers anyway, the
   * run still to come (`working`): a StartRun that slow, or one that refuses what this route cannot
   * check (a fork at a turn its parent lacks: the role may not read the parent's conversation),
   * whose run never comes. A write in this process wakes it at once (the local engine).
   */
  const untilRecorded = async (runId: string): Promise<void> => {
    const writes = watch(runId);
    try {
      const until = deps.clock.now().getTime() + RECORD_WAIT_MS;
      for (let left = RECORD_WAIT_MS; !(await deps.ledger.getRun(runId)) && left > 0; left = until - deps.clock.now().getTime()) {
        await writes.next(Math.min(RECORD_POLL_MS, left));
      }
    } finally {
      writes.close();
    }
  };

  const list = async (rawQuery: unknown): Promise<RunsPage> => {
    const query = parseOrThrow(ListQuery, rawQuery ?? {}, 'query');
    const after = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
    const pending = new Map<string, number>();
    for (const approval of await deps.ledger.listPendingApprovals()) pending.set(approval.runId, (pending.get(approval.runId) ?? 0) + 1);
    // At most LIST_READ_LIMIT runs from the cursor on are read per page (a keyed query of the agent's
    // runs); a first page that nothing filters reads one run past the page, which tells whether
    // more follow: every run read is a record checked (a GetItem on DynamoDB).
    const damaged: { runId: string; error: string }[] = [];
    const onDamaged = (runId: string, error: Error) => void damaged.push({ runId, error: error.message });
    const unfiltered = after === undefined && query.status === undefined && (serving !== undefined || query.agent === undefined);
    const readLimit = unfiltered ? query.limit + 1 : LIST_READ_LIMIT;
    const read = !serving
      ? await deps.ledger.listRuns(readLimit, { onDamaged })
      : query.agent === undefined || query.agent === serving.agent.name
        ? await deps.ledger.listRunsOf(serving.agent.name, readLimit, { onDamaged, ...(after && { notAfter: after.createdAt }) })
        : [];
    const runs = read
      .sort(newestFirst)
      .filter((run) => query.agent === undefined || run.agent === query.agent)
      .map((run) => ({ run, lifecycle: lifecycleOf(run.status, pending.get(run.runId) ?? 0, run.error) }))
      .filter(({ run, lifecycle }) => query.status === undefined || run.status === query.status || lifecycle === query.status)
      .filter(({ run }) => after === undefined || newestFirst(run, after) > 0);
    const page = runs.slice(0, query.limit);
    // A full page continues after its last run; a short one after the last run read, when the read
    // stopped at its limit (runs a status filter left out may hide more behind it).
    const last = runs.length > query.limit ? page.at(-1)?.run : read.length + damaged.length >= readLimit ? read.sort(newestFirst).at(-1) : undefined;
    return {
      runs: page.map(({ run, lifecycle }) => ({
        runId: run.runId, agent: run.agent, status: run.status, lifecycle, createdAt: run.createdAt,
        ...(run.finishedAt && { finishedAt: run.finishedAt }), ...(run.startedBy && { startedBy: run.startedBy }),
        steps: run.steps, dollars: run.costMicros / 1_000_000, executionArn: run.executionArn,
      })),
      ...(last && { nextCursor: encodeCursor(last) }),
      ...(damaged.length > 0 && { damaged }),
    };
  };

  const cancel = async (caller: Identity, rawRunId: string, body: unknown): Promise<RunResource> => {
    const runId = parseOrThrow(RunId(), rawRunId, 'runId');
    const { reason = '' } = parseOrThrow(CancelBody, body ?? {}, 'cancel request');
    // Whoever may start runs may cancel them, recorded as the person the deployment names (approvals/people.ts).
    const canceller = starterPerson(caller.principal ?? caller.id, caller.id, serving?.people ?? {});
    if (!canceller.ok) throw new StarterRefused(`caller: ${canceller.message}`);
    const run = await deps.ledger.getRun(runId);
    if (!run) throw new NotFoundError(`runId: no run ${runId}`);
    if (run.status !== 'running') throw new RunConflict(`runId: run ${runId} is ${run.status}, not running`, (await read(runId))!, run.killed && run.killed.by === canceller.person);
    // Who asked is who the transport proved (never a field); the first kill stands.
    const flag = { by: canceller.person, at: deps.clock.now().toISOString(), reason };
    await deps.ledger.killRun(runId, flag);
    // Its child runs (defineAgentTool) with it, their executions stopped now: a parent waiting on a
    // child would otherwise wait for the child to reach its next step.
    await killChildren({ ledger: deps.ledger, ...(serving?.children && { children: serving.children }), now: deps.clock.now() }, run.agent === serving?.agent.name ? serving.agent : await reading?.agentOf(run.agent), run, flag);
    // A run that waits for a person would reach its next step only once the wait ends: stop it now
    // (ExecutionStopped closes its approvals; the kill recorded above is the one that stands).
    if ((await pendingOf(runId)).length > 0) await serving?.stop?.(run.executionArn, 'Savepoint.Cancelled', `cancelled by ${canceller.person}${reason ? `: ${reason}` : ''}`);
    return (await read(runId))!;
  };

  // Batches start each run through `start` above (lambdas/runs/batch.ts).
  const batches = serving?.batches && createBatchRoutes({ agent: serving.agent, batches: serving.batches.store, itemFunction: serving.batches.itemFunction, ...(serving.batches.readManifest && { readManifest: serving.batches.readManifest }), runs: deps.ledger, clock: deps.clock, ...(serving.batchPollSeconds !== undefined && { pollSeconds: serving.batchPollSeconds }) });
  const batchesOrMissing = () => {
    if (!batches) throw new NotFoundError('batches: this deployment starts no batches (it has no batch state machine)');
    return batches;
  };
  const startBatch = async (caller: Identity, body: unknown) => {
    const routes = batchesOrMissing();
    // Whoever may start runs may start a batch of them, and no one else: refused here (403) as a
    // start is, before the batch's execution starts, not a 202 whose every item's start is refused.
    const starter = starterPerson(caller.principal ?? caller.id, caller.id, serving?.people ?? {});
    if (!starter.ok) throw new StarterRefused(`caller: ${starter.message}`);
    return routes.start(caller, body);
  };
  const getBatch = (batchId: string) => batchesOrMissing().get(batchId);

  return { start, get, list, cancel, startBatch, getBatch };
}
