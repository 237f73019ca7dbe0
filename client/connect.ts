import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type * as z from 'zod';
import type { ForkRequest } from '../lambdas/runs/fork.js';
import type { Lifecycle } from '../lambdas/runs/lifecycle.js';
import type { RunRecord } from '../lambdas/records/ledger-records.js';
import { SEEN_LIFECYCLE_HEADER, TERMINAL_LIFECYCLES } from '../lambdas/runs/lifecycle.js';
import { APPROVAL_ID_PATTERN, approvalIdRefusal } from '../lambdas/approvals/approval-id.js';
import { BATCH_ID_PATTERN, batchIdRefusal, RUN_ID_PATTERN, runIdRefusal } from '../lambdas/runs/run-id.js';
import { processLives } from '../lambdas/shared/process-lives.js';
import { followEvents } from './events.js';
import { abortError, RunsApiError } from './runs-api-error.js';
import { engineGone, isLoopback, loopbackRequest, type Answer } from './loopback-request.js';

/**
 * `connect`: the client of a runs API — `savepoint serve` on this machine, or a deployed stack —
 * over HTTP only. It holds no ledger and no engine: whatever it does, it asks the API, which
 * records who asked (the owner's credential locally, the IAM principal that signed on AWS).
 */

// A run and its approvals as the runs API answers them, defined apart: a RunsApiError carries one.
export type { Approval, Run } from './run.js';
import type { Approval, Run } from './run.js';

// The wire's answers, defined once beside the handler that sends them.
export type { RunAccepted as StartedRun, RunSummary } from '../lambdas/runs/runs-api.js';
import type { RunAccepted as StartedRun, RunSummary } from '../lambdas/runs/runs-api.js';
export type { BatchResource as Batch, BatchRunStatus, ExecutionManifest as BatchManifestSource } from '../lambdas/runs/batch.js';
import type { BatchResource as Batch } from '../lambdas/runs/batch.js';

/** What `startBatch` starts: one run per item, at most `concurrency` at once. */
export interface StartBatchOptions {
  /** The agent whose runs these are. @default the one the API serves */
  agent?: string;
  /** One run's input per item (at most 1,000), each checked by the agent's input schema. Either this or `manifest`. */
  items?: unknown[];
  /**
   * The S3 object of the items, read by the batch's execution (a Distributed Map's ItemReader): a
   * JSON array, or a CSV file whose first row names the fields (`format`: `csv` for a key ending
   * in `.csv`, else `json`). Either this or `items`. On AWS the stack's batches must be allowed the
   * bucket (`batches.manifestBuckets`); `savepoint serve` reads the bucket `savepoint-local` of its
   * local S3 (`<state dir>/s3/savepoint-local/<key>`).
   */
  manifest?: { bucket: string; key: string; format?: 'json' | 'csv' };
  /** Runs live at once, at most. @default 10 */
  concurrency?: number;
  /** The batch's id: the same id answers the same batch, and its runs are `<batchId>-<index>`. @default a digest of the agent, the items and the key */
  batchId?: string;
  /** A field of each item whose value names its run (`<batchId>-<value>`), instead of its index. */
  key?: string;
}

/** A page of runs, newest first. */
export interface RunPage {
  /** The runs of this page, newest first. */
  runs: RunSummary[];
  /** Pass it back as `cursor` for the next page; absent on the last one. */
  nextCursor?: string;
  /** Runs whose record fails verification (the ledger's seal): named, not listed. */
  damaged?: { runId: string; error: string }[];
}

/** What `start` starts. */
export interface StartOptions {
  /** The agent to run. @default the one the API serves */
  agent?: string;
  /** The run's input, checked by the agent's input schema (a bad one is refused, naming the field). */
  input: unknown;
  /** The idempotency key of the whole run: the same id answers the same run. @default the agent's run id of the input */
  runId?: string;
  /** Budgets and other settings of this run (RunConfig), e.g. `{ maxDollars: 2 }`. */
  config?: Record<string, unknown>;
  /** The run's model (`provider:model-id`). @default the deployment's (a fork's: its parent's) */
  model?: string;
  /**
   * Start the run as a fork of a finished or stopped run (`savepoint fork`): its turns before `at`
   * copied from the parent `from` without any call, then live. `effects: 'dry'` sends no write;
   * `'reuse'` (the default) answers a write the parent made from its record. A fork is a run of its own: a parent
   * the deployment does not hold is refused (`RunsApiError` 404), a parent still running (409, with
   * the parent as the error's `run`), a fork under its parent's run id
   * (400) or under the id of any other run (409, with that run as the error's `run`), and nothing starts; the same fork
   * asked for again (parent, turn, effects, input and model) answers the fork (`created: false`).
   * @default none: a run of its own
   * @example
   * await client.start({ input: { date: '2026-11-28' }, runId: 'day1-fork-5', fork: { from: 'day1', at: 5, effects: 'dry' } });
   */
  fork?: StartFork;
}

/** A fork's request (`StartOptions.fork`), as the runs API takes it (lambdas/runs/fork.ts): `from`, `at`, and optionally `effects`, `freshBudget`, `results`. */
export type StartFork = z.input<ReturnType<typeof ForkRequest>>;

/** One event of a run's progress stream (`GET /v1/runs/{runId}/events`). */
export interface RunEvent {
  /** The event's fixed position in the run: what a resume (`after`) names. */
  readonly id: string;
  /** What happened, e.g. `model.turn`, `tool.result`, `run.finished`. */
  readonly type: string;
  /** The event's figures. */
  readonly data: Readonly<Record<string, unknown>>;
}

export { RunsApiError };

/** The client `connect` returns: the same for `serve` and for a deployed stack. */
export interface RunsClient {
  /**
   * Starts a run (202), or answers the run that already has this run id (nothing started). The
   * same run id with another input, or another model named, throws a `RunsApiError` 409 whose `run`
   * is the run that holds the id.
   *
   * With `connect({ stateDir })` a start lasts through a restart of `serve`, as `wait` does: when
   * the engine is gone before it answers (the connection refused or reset, or no serve on the state
   * directory), it is asked again at the address the next serve publishes, every 250 ms doubling to
   * 2 s, for up to a minute (then it throws what the last attempt got), until `signal`. The run id
   * is its idempotency key: a start that landed before its answer was lost is answered with its run
   * (`created: false`), started once. A refusal (4xx) is thrown at once, as any failure of a
   * client connected by `url` or `stack`.
   *
   * @example
   * const { runId } = await client.start({ input: { date: '2026-11-28' }, runId: 'nightly-2026-11-28' });
   */
  start(options: StartOptions, request?: RequestOptions): Promise<StartedRun>;
  /** The run now; `undefined` for a run id the deployment does not hold. */
  get(runId: string, options?: RequestOptions): Promise<Run | undefined>;
  /**
   * A page of runs, newest first: of the `agent` named, or of every agent the API serves (a serve
   * of several agents pages through all their runs with one cursor). Pass `nextCursor` back
   * unchanged as `cursor`; a cursor it did not give is refused (400).
   *
   * @example
   * for (let page = await client.list({ status: 'input_required' }); ; page = await client.list({ cursor: page.nextCursor })) {
   *   for (const run of page.runs) console.log(run.runId);
   *   if (!page.nextCursor) break;
   * }
   */
  list(query?: { agent?: string; status?: RunRecord['status'] | Lifecycle; cursor?: string; limit?: number } & RequestOptions): Promise<RunPage>;
  /**
   * Resolves when the run has ended (or waits for a person, with `untilInput`), by long-polls of at
   * most 20 s each (under API Gateway's 29 s). `signal` stops the wait, the long-poll in flight
   * too: it rejects with an error named `AbortError` (its `cause` the signal's reason).
   *
   * With `connect({ stateDir })` the wait lasts through a restart of `serve`: while no serve answers
   * on the state directory (stopped, restarting, killed) it asks again every 250 ms, doubling to
   * 2 s, at the address the next serve publishes there, for up to a minute without an answer; then
   * it throws what the last attempt got (the engine was a one-shot `savepoint run`, or serve is not
   * coming back). Pass a `signal` (e.g. `AbortSignal.timeout(ms)`) to bound it sooner. A refusal
   * still throws a `RunsApiError` at once (404 no such run, 400, 403); so does any failure of a
   * client connected by `url` or `stack`.
   *
   * @example
   * const run = await client.wait(runId);
   * console.log(run.lifecycle, run.report.dollars);
   */
  wait(runId: string, options?: { untilInput?: boolean; signal?: AbortSignal }): Promise<Run>;
  /**
   * Cancels a live run: the kill is recorded with who asked; a run that waits for a person stops at
   * once. A run that has ended throws a `RunsApiError` 409 whose `run` is that run.
   *
   * With `connect({ stateDir })` a cancel lasts through a restart of `serve`, as `decide` does: asked
   * again at the next serve's address while the engine is gone. A cancel that landed before its
   * answer was lost finds its run stopped: when the kill recorded is the caller's (as the API tells
   * it) with this `reason`, the run is the answer; a run that ended otherwise (by itself, by
   * another's kill or with another reason) still throws the 409, as a first attempt's 409 does.
   */
  cancel(runId: string, options?: { reason?: string } & RequestOptions): Promise<Run>;
  /** The approvals waiting for a decision: of one run, or of every run. A run id no run can have is refused (`RunsApiError` 400), as the runs API refuses it. */
  approvals(runId?: string, options?: RequestOptions): Promise<Approval[]>;
  /**
   * Approves or rejects an approval, as the caller the API authenticated: the approval as recorded,
   * and whether its run's execution got the decision (`delivered`; `false`: recorded, and taken when
   * the run asks again). An approval the deployment's policy gives to two people is decided by the
   * second approval: the first answers the approval still `pending`, with its `firstApproval` and
   * `waitingForSecond: true` (202), and the same person approving again is refused (`RunsApiError`
   * 403: another person must approve). An id no approval can have (`''`) is refused before any
   * request (`RunsApiError` 400), as the API refuses it; an approval decided already throws a
   * `RunsApiError` 409.
   *
   * With `connect({ stateDir })` a decision lasts through a restart of `serve`, as `wait` does:
   * when the engine is gone before it answers (the connection refused or reset, or no serve on the
   * state directory), it is asked again at the address the next serve publishes, every 250 ms
   * doubling to 2 s, for up to a minute (then it throws what the last attempt got), until `signal`.
   * A decision is taken once: asked again after its first attempt landed and its answer was lost,
   * the API refuses it, and when what it recorded is this call's (as the API tells it) the answer
   * is what the first attempt would have answered. A 409 whose decision recorded is this one by the
   * caller answers that approval (`delivered` as the retry delivered it again); a 403 for a first
   * approval of two that is the caller's, the approval still waiting for another person, answers it
   * with `waitingForSecond: true` (`delivered: false`); a 409 for an approval another person
   * approved on the caller's first approval answers that approval, `approved`, its `decidedBy` the
   * other person (the caller's approval landed and counted; `delivered` as the retry delivered it
   * again). Another decision or decider recorded (a rejection, after the caller's first approval
   * included) and a first attempt's 409 or 403 still throw; any other refusal (4xx) is thrown at
   * once, as any failure of a client connected by `url` or `stack`.
   *
   * @example
   * // Sent while serve restarts, it is taken by the next one; the run goes on.
   * const approval = await client.decide(approvalId, 'approve', { reason: 'checked', signal: AbortSignal.timeout(30_000) });
   * if (approval.waitingForSecond) console.log(`recorded; ${approval.firstApproval?.by} asks a second approver`);
   * else console.log(approval.status, approval.decidedBy); // 'approved', 'local:<you>'
   */
  decide(approvalId: string, decision: 'approve' | 'reject', options?: { reason?: string } & RequestOptions): Promise<Approval & { delivered?: boolean; waitingForSecond?: true }>;
  /**
   * The run's progress as it happens (`GET /v1/runs/{runId}/events`, Server-Sent Events): each
   * event once, in order, until the run's last (`run.finished`). A dropped connection is resumed by
   * itself after the last event yielded (`Last-Event-ID`), a connection silent for 45 s (three
   * heartbeats missed) included, across a restart of `serve` too (with
   * `connect({ stateDir })` it looks the engine's new address up); `after` starts after an event
   * id a stream gave before. A refusal (a run id no run can have 400, before any request; no such
   * run 404; an `after` the run does not have 400) throws a RunsApiError. `signal` ends the iteration where it is, without an error.
   *
   * @example
   * for await (const event of client.events(runId)) console.log(event.id, event.type, event.data);
   */
  events(runId: string, options?: { after?: string; signal?: AbortSignal }): AsyncIterable<RunEvent>;
  /**
   * Starts a batch (`POST /v1/batches`): one run per item, at most `concurrency` live at once (a
   * Distributed Map on AWS). Each item's run id derives from the batch id and the item, so the
   * same batch started again starts no run twice (`created: false`); another batch under a taken
   * batch id throws a `RunsApiError` 409.
   *
   * With `connect({ stateDir })` a start of a batch lasts through a restart of `serve`, as `start`
   * does: asked again at the next serve's address while the engine is gone. The batch id is its
   * idempotency key — given, or by default a digest of the agent, the items (or the manifest's
   * location) and the key, the same for the same request — so a batch that started before its answer
   * was lost is answered with that batch (`created: false`), each item's run started once. A
   * manifest whose object changed in between is another batch: that retry throws the 409.
   *
   * @example
   * const batch = await client.startBatch({ items: customers.map((id) => ({ customer: id })), concurrency: 20, batchId: 'invoices-2026-11' });
   * console.log(batch.runs.length, batch.created);
   */
  startBatch(options: StartBatchOptions, request?: RequestOptions): Promise<Batch>;
  /**
   * A batch's progress (`GET /v1/batches/{batchId}`): each run's status, counted, and for a batch that did not succeed its `error` and `cause` (as Step Functions ended its execution); `undefined` for a batch id the deployment does not hold. An id no batch can have (`''`) is refused before any request (`RunsApiError` 400).
   *
   * @example
   * const { status, counts } = (await client.batch('invoices-2026-11'))!;
   * console.log(status, counts.succeeded ?? 0);
   */
  batch(batchId: string, options?: RequestOptions): Promise<Batch | undefined>;
}

/**
 * What every call of the client takes besides its own options: a `signal` that stops it — the
 * request in flight, its answer not yet read — rejecting with an error named `AbortError` (code
 * `ABORT_ERR`, its `cause` the signal's reason), as `wait` does. Without one, a call waits as long
 * as the transport lets it (a server that accepts the connection and never answers holds it).
 *
 * @example
 * const run = await client.get(runId, { signal: AbortSignal.timeout(5_000) });
 */
export interface RequestOptions {
  /** Stops the call. @default none: the call is not stopped */
  signal?: AbortSignal;
}

/** Where `connect` finds the runs API. */
export type ConnectOptions =
  | {
      /** The state directory of a `savepoint serve` on this machine: its address and credential are in its engine.json (readable by its owner only). */
      stateDir: string;
    }
  | {
      /** The origin of a `savepoint serve` (`http://127.0.0.1:<port>`). */
      url: string;
      /** Its credential (the first path segment of every request). */
      credential: string;
    }
  | {
      /** A deployed stack's name: its runs API is found by its CloudFormation outputs, and each request is signed (SigV4) with your AWS credentials. */
      stack: string;
      /** @default your AWS configuration's */
      region?: string;
      /**
       * Whose API to reach, in a stack deployed before 0.5.0 (an API per agent) that runs several.
       * A stack's agents share one API since (each start names its `agent`): none needed.
       * @default the stack's one API
       */
      agent?: string;
    };

/** The runs API's base (`…/v1`) and how to reach it. */
export interface RunsEndpoint {
  /** e.g. `http://127.0.0.1:4321/<credential>/v1`, or `https://<api>.execute-api.<region>.amazonaws.com/v1`. */
  readonly base: string;
  /** How requests are sent (a signing fetch for a stack). @default globalThis.fetch */
  readonly fetch?: typeof fetch;
  /** Finds the API again (a `serve` that restarted publishes a new address): where a refused request, a resumed event stream and a `wait` through the restart go. @default the same base */
  readonly locate?: () => RunsEndpoint;
}

/**
 * Connects to a runs API: `savepoint serve` by its state directory or its address, or a deployed
 * stack. Each returns the same client. Options that name no API, or more than one, reject with a
 * `TypeError` naming the option; a state directory no serve answers for, with a `RunsApiError` 503.
 *
 * @example
 * ```ts
 * import { connect } from 'savepoint/client';
 *
 * const client = await connect({ stateDir: '.savepoint' }); // or { url, credential }, or { stack: 'Savepoint', region: 'eu-west-1' }
 * const { runId } = await client.start({ agent: 'refund-reconciler', input: { date: '2026-11-28' } });
 * const run = await client.wait(runId, { untilInput: true });
 * for (const approval of run.approvals) await client.decide(approval.approvalId, 'approve');
 * console.log((await client.wait(runId)).lifecycle); // 'completed'
 * ```
 */
export async function connect(options: ConnectOptions): Promise<RunsClient> {
  checkConnectOptions(options);
  if ('stateDir' in options) return runsClient({ ...servedAt(options.stateDir), locate: () => servedAt(options.stateDir) });
  if ('url' in options) return runsClient({ base: `${options.url.replace(/\/+$/, '')}/${options.credential}/v1` });
  // The AWS SDK loads only for a deployed stack.
  const { stackEndpoint } = await import('./deployment.js');
  return runsClient(await stackEndpoint(options));
}

/**
 * Refuses options that name no API, or more than one, or a `url` that is not one: a TypeError
 * naming the option, before any request (a plain JavaScript caller has no type checker).
 */
function checkConnectOptions(options: ConnectOptions): void {
  const named = (options ?? {}) as Record<string, unknown>;
  const given = (['stateDir', 'url', 'stack'] as const).filter((key) => named[key] !== undefined);
  if (given.length !== 1) throw new TypeError(`connect: give one of stateDir, url (with its credential) or stack${given.length > 1 ? `, not ${given.join(' and ')}` : ''}`);
  const key = given[0]!;
  if (typeof named[key] !== 'string' || named[key] === '') throw new TypeError(`connect: ${key}: expected a non-empty string, got ${JSON.stringify(named[key])}`);
  if (!('url' in options)) return;
  if (!URL.canParse(options.url) || !/^https?:$/.test(new URL(options.url).protocol)) throw new TypeError(`connect: url: expected an http(s) origin such as http://127.0.0.1:4321, got ${JSON.stringify(options.url)}`);
  if (typeof options.credential !== 'string' || options.credential === '') throw new TypeError("connect: credential: expected the serve's credential (the first path segment of its runs API's address in engine.json)");
}

/** The runs API a `savepoint serve` publishes in its state directory (engine.json). */
export function servedAt(stateDir: string): RunsEndpoint {
  const file = join(resolve(stateDir), 'engine.json');
  let runs: unknown;
  let pid: unknown;
  try {
    const engine = JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown; endpoints?: { runs?: unknown } };
    pid = engine.pid;
    runs = engine.endpoints?.runs;
  } catch (error) {
    const missing = (error as { code?: string }).code === 'ENOENT';
    throw new RunsApiError(503, missing ? `stateDir: no savepoint engine serves ${stateDir} (no ${file}): start one with \`savepoint serve --agent <name|path>\`` : `stateDir: ${file} cannot be read: ${(error as Error).message}`);
  }
  if (typeof runs !== 'string' || !/\/v1\/runs$/.test(runs)) throw new RunsApiError(503, `stateDir: ${file} names no runs API (an engine older than this client): restart it with \`savepoint serve\``);
  // A serve killed without its cleanup (SIGKILL, a crash) leaves its engine.json behind: its
  // address refuses every connection, which says less than this.
  if (typeof pid === 'number' && !processLives(pid)) {
    throw new RunsApiError(503, `stateDir: no savepoint engine serves ${stateDir}: the serve that wrote ${file} (pid ${pid}) is gone; start one with \`savepoint serve --agent <name|path>\``);
  }
  return { base: runs.slice(0, -'/runs'.length) };
}

/** The pauses while no serve answers: 250 ms, doubling to 2 s (a restarted serve is found within 2 s of its start). */
const RECONNECT_FIRST_MS = 250;
const RECONNECT_MAX_MS = 2_000;
const reconnectDelay = (gaps: number) => Math.min(RECONNECT_FIRST_MS * 2 ** gaps, RECONNECT_MAX_MS);
/**
 * How long a call asks again with no serve answering: a restart takes seconds; an engine that does
 * not come back (a one-shot `savepoint run` that ended with its run) would otherwise hold it forever.
 */
const RECONNECT_GIVE_UP_MS = 60_000;

/**
 * Whether a request failed because no serve answers on the state directory: no answer at all (a
 * refused or reset connection), or a 503 — `locate` finding no serve there (no engine.json, or its
 * serve gone), or a serve still starting its engines. Any other answer (a 404, a 400, a 403, a 500)
 * is the API's own, and final.
 */
function noServeAnswers(error: unknown): boolean {
  return !(error instanceof RunsApiError) || error.status === 503;
}

/**
 * Whether a request that changes something (a decision, a start, a batch, a cancel) failed because the engine is gone:
 * its connection refused or reset before any answer (`engineGone`), or a 503 — no serve on the state
 * directory, or one still starting its engines, which answers before anything is done. Narrower
 * than `noServeAnswers`: a failure of any other kind (an answer that is not the API's, 300 s of
 * silence) says nothing of a restart, and is thrown at once.
 */
function engineGoneOrStarting(error: unknown): boolean {
  return engineGone(error) || (error instanceof RunsApiError && error.status === 503);
}

/**
 * Asks `attempt` again while its failure is a gap in the serving (`gap`): after 250 ms, doubling to
 * 2 s, for up to a minute without an answer, then it throws what the last attempt got; `signal`
 * stops it, in a pause too, with `stopped()`. `attempt` is told how many attempts failed before it.
 * What `wait` does between two long-polls, and `decide`, `start`, `startBatch` and `cancel`, through a restart of serve.
 */
async function throughRestarts<T>(attempt: (failed: number) => Promise<T>, gap: (error: unknown) => boolean, signal: AbortSignal | undefined, stopped: () => Error): Promise<T> {
  let unansweredSince: number | undefined;
  for (let gaps = 0; ; ) {
    if (signal?.aborted) throw stopped();
    try {
      return await attempt(gaps);
    } catch (error) {
      if (signal?.aborted) throw stopped();
      if (!gap(error)) throw error;
      unansweredSince ??= Date.now();
      if (Date.now() - unansweredSince >= RECONNECT_GIVE_UP_MS) throw error;
      await pause(reconnectDelay(gaps++), signal);
    }
  }
}

/** The status a decision records (an approval's `status` once decided). */
const RECORDED = { approve: 'approved', reject: 'rejected' } as const;

/**
 * A decision's refusal (lambdas/approvals/decision.ts): the approval as recorded, and, on a 409
 * (`AlreadyDecided`), whether its decider is the caller; on a 403, or the 409 of an approval
 * another person completed (`ApprovedFirst`), that the caller gave its first approval of two.
 */
type DecisionRefusal = { message?: string; approval?: Approval; decidedByCaller?: boolean; delivered?: boolean; firstApprovalByCaller?: boolean };

/** A cancel's 409 (lambdas/runs/runs-api.ts `RunConflict`): the run, and whether its kill is the caller's. */
type CancelConflict = { message?: string; run?: Run; killedByCaller?: boolean };

/**
 * The RunsApiError of a refusal the API answered (`answer`: its JSON; `text`: the body otherwise),
 * with the run a conflict names (a 409's `run`): the caller's to read, not to ask for again.
 */
function refusal(status: number, answer: Record<string, unknown> | undefined, text = ''): RunsApiError {
  const message = answer ? answer['message'] : text.slice(0, 200) || undefined;
  const run = answer?.['run'];
  return new RunsApiError(status, typeof message === 'string' ? message : `the runs API answered ${status}`, typeof run === 'object' && run !== null && !Array.isArray(run) ? { run: run as Run } : {});
}

/**
 * Settles after `ms`, or at once when `signal` aborts. A plain timer, not an unref'd one: an app
 * whose only work is waiting for a run would otherwise exit in the middle of the wait.
 */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

/**
 * A run id the runs API would refuse is refused here, as the API refuses it (400, naming `runId`):
 * sent, `''` or `.` would name another path (`/runs/`, the listing, whose answer read as a run
 * failed with a TypeError), and an id no run can have would look like a run that is not there.
 */
export function checkRunId(runId: string): void {
  if (!RUN_ID_PATTERN.test(runId)) throw new RunsApiError(400, runIdRefusal(runId));
}

/**
 * An approval id or batch id the API could not be asked about is refused here, as `checkRunId`
 * refuses a run id (400, naming the field): sent, `''` would name another path (`/approvals/`,
 * `/batches/`, whose 405 reads as a method the API lacks), and an id none can have would look like
 * one that is not there.
 */
function approvalPath(approvalId: string): string {
  if (typeof approvalId !== 'string' || !APPROVAL_ID_PATTERN.test(approvalId)) throw new RunsApiError(400, approvalIdRefusal(approvalId));
  return `/approvals/${encodeURIComponent(approvalId)}`;
}

function batchPath(batchId: string): string {
  if (typeof batchId !== 'string' || !BATCH_ID_PATTERN.test(batchId)) throw new RunsApiError(400, batchIdRefusal(batchId));
  return `/batches/${encodeURIComponent(batchId)}`;
}

/** `text` as a JSON object (every answer of the runs API is one); `undefined` for anything else. */
function jsonObjectOf(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A run's path in the runs API. */
function runPath(runId: string): string {
  checkRunId(runId);
  return `/runs/${encodeURIComponent(runId)}`;
}

/**
 * The client of the runs API at `endpoint` (what `connect` returns). With its `locate`, a request
 * the endpoint does not answer (refused, reset) is sent once more to where `locate` finds the API
 * now (`connect({ stateDir })`: a serve that restarted).
 */
export function runsClient(first: RunsEndpoint): RunsClient {
  let endpoint = first;
  const locate = first.locate;
  // A loopback serve is asked over node:http (client/loopback-request.ts); anything else with fetch.
  const request = (method: string, path: string, body: unknown, signal: AbortSignal | undefined, headers: Record<string, string>) =>
    (endpoint.fetch ?? (isLoopback(endpoint.base) ? loopbackRequest : fetch))(`${endpoint.base}${path}`, {
      method,
      ...(body === undefined ? Object.keys(headers).length > 0 && { headers } : { headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body) }),
      ...(signal && { signal }),
    });
  /** `resent`: the request was sent again, to where `locate` found the API (its first sending may have landed). */
  const call = async <T>(method: 'GET' | 'POST', path: string, body?: unknown, accept: readonly number[] = [], signal?: AbortSignal, headers: Record<string, string> = {}): Promise<{ status: number; body: T; resent: boolean }> => {
    let response: Answer;
    let resent = false;
    const stopped = () => abortError(`stopped: ${method} ${path.replace(/\?.*/, '')}`, signal);
    if (signal?.aborted) throw stopped();
    try {
      response = await request(method, path, body, signal, headers);
    } catch (error) {
      if (signal?.aborted) throw stopped();
      // A serve that restarted listens at a new address with a new credential: look it up once more
      // (what it published in its state directory) and ask again. Every request is safe to repeat:
      // a start is idempotent on its run id and a batch on its batch id, a cancel's first kill stands,
      // a decision is taken once (a repeat is a 409, or a 403 for a first approval of two, which `decide` reads).
      const moved = locate && !(error instanceof RunsApiError) ? locate() : undefined;
      if (!moved || moved.base === endpoint.base) throw error;
      endpoint = { ...moved, locate };
      resent = true;
      response = await request(method, path, body, signal, headers);
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      if (signal?.aborted) throw stopped();
      throw error;
    }
    const answer = jsonObjectOf(text);
    if (!response.ok && !accept.includes(response.status)) throw refusal(response.status, answer, text);
    // The runs API answers every success with a JSON object. Anything else is another server at the
    // address (a web app, a proxy's page): read as a run, it had no lifecycle, and `wait` asked again
    // at once, thousands of times a second, for ever.
    if (response.ok && !answer) {
      throw new Error(`${method} ${path}: ${new URL(endpoint.base).origin} answered ${response.status} with ${text === '' ? 'nothing' : JSON.stringify(text.slice(0, 80))}, not the runs API's JSON: is it a savepoint serve or a runs API?`);
    }
    return { status: response.status, body: (answer ?? {}) as T, resent };
  };
  /**
   * What changes something (a POST) is asked again through a restart of serve (`connect({ stateDir })`),
   * as `wait` waits through one: when the engine was gone before it answered, at the address the
   * next serve publishes. An attempt after one that may have landed can be refused for the work
   * done already (a 409; a 403 for a first approval of two): `landed`, by status, finds in the
   * refusal's body whether it is this call's own, whose answer was lost (the caller's, as the API
   * tells it), and what to answer then. Any other refusal, a first attempt's too, is the refusal it is.
   */
  const change = async <T, R = never>(path: string, body: unknown, signal: AbortSignal | undefined, landed: Partial<Record<403 | 409, (refused: R) => T | undefined>> = {}): Promise<T> => {
    const readable = Object.keys(landed).map(Number) as (403 | 409)[];
    const answer = await throughRestarts(
      async (failed) => {
        const sent = await call<T | R>('POST', path, body, readable, signal);
        return { ...sent, retried: failed > 0 || sent.resent };
      },
      (error) => locate !== undefined && engineGoneOrStarting(error),
      signal,
      () => abortError(`stopped: POST ${path}`, signal),
    );
    const status = answer.status as 403 | 409;
    if (!readable.includes(status)) return answer.body as T;
    const own = answer.retried ? landed[status]!(answer.body as R) : undefined;
    if (own !== undefined) return own;
    throw refusal(status, answer.body as Record<string, unknown>);
  };
  /** `seen`: the lifecycle the caller last read, which a long-poll waits from (it may have moved on since). */
  const get = async (runId: string, wait?: number, signal?: AbortSignal, seen?: Lifecycle): Promise<Run | undefined> => {
    const answer = await call<Run>('GET', `${runPath(runId)}${wait ? `?wait=${wait}` : ''}`, undefined, [404], signal, seen ? { [SEEN_LIFECYCLE_HEADER]: seen } : {});
    return answer.status === 404 ? undefined : answer.body;
  };

  return {
    start: (options, request = {}) => change<StartedRun>('/runs', options, request.signal),
    get: (runId, options = {}) => get(runId, undefined, options.signal),
    async list({ signal, ...query } = {}) {
      const params = new URLSearchParams(Object.entries(query).flatMap(([key, value]) => (value === undefined ? [] : [[key, String(value)]])));
      return (await call<RunPage>('GET', `/runs${params.size > 0 ? `?${params}` : ''}`, undefined, [], signal)).body;
    },
    async wait(runId, options = {}) {
      const stopped = () => abortError(`stopped waiting for run ${runId}`, options.signal);
      // The first read answers at once: a long-poll answers when the run moves on, so a run already
      // waiting for a person would hold the first one to its 20 s. Each long-poll names the
      // lifecycle read before it: a run that moved on in between (to input_required, which only a
      // person's decision ends) is answered at once, not at the poll's cap.
      let seen: Lifecycle | undefined;
      for (;;) {
        // No serve answers (it stopped, or restarts): the run goes on when one starts again on the
        // state directory, so the wait waits for it too, asking again where `locate` finds it. The
        // signal ends a long-poll in flight too.
        const run = await throughRestarts(() => get(runId, seen === undefined ? 0 : 20, options.signal, seen), (error) => locate !== undefined && noServeAnswers(error), options.signal, stopped);
        if (!run) throw new RunsApiError(404, `runId: no run ${runId}`);
        if (TERMINAL_LIFECYCLES.includes(run.lifecycle) || (options.untilInput && run.lifecycle === 'input_required')) return run;
        seen = run.lifecycle;
      }
    },
    // A run that has ended may have been stopped by this call's own kill: the caller's, with this reason.
    cancel: async (runId, { signal, ...body } = {}) =>
      change<Run, CancelConflict>(`${runPath(runId)}/cancel`, body, signal, {
        409: (conflict) => (conflict.killedByCaller === true && conflict.run?.lifecycle === 'cancelled' && conflict.run.report.killed?.reason === (body.reason ?? '') ? conflict.run : undefined),
      }),
    async approvals(runId, options = {}) {
      // The approval API lists every run's: a run id no run can have would filter them all away,
      // and look like a run with nothing waiting, so it is refused as the runs API refuses it.
      if (runId !== undefined) checkRunId(runId);
      const { approvals } = (await call<{ approvals: Approval[] }>('GET', '/approvals', undefined, [], options.signal)).body;
      return runId === undefined ? approvals : approvals.filter((approval) => approval.runId === runId);
    },
    decide: async (approvalId, decision, options = {}) =>
      change<Awaited<ReturnType<RunsClient['decide']>>, DecisionRefusal>(approvalPath(approvalId), { decision, ...(options.reason !== undefined && { reason: options.reason }) }, options.signal, {
        // An approval decided already may hold this call's own decision: the same one, by the caller;
        // or, approving, the caller's first approval of two, which another person's then completed.
        409: (refused) =>
          refused.approval?.status === RECORDED[decision] && (refused.decidedByCaller === true || (decision === 'approve' && refused.firstApprovalByCaller === true))
            ? { ...refused.approval, delivered: refused.delivered ?? false }
            : undefined,
        // An approval still waiting for a second person may hold this call's own first approval: the
        // caller's, answered as its first attempt was (202: recorded, nothing delivered).
        403: (refused) =>
          decision === 'approve' && refused.firstApprovalByCaller === true && refused.approval?.status === 'pending' ? { ...refused.approval, delivered: false, waitingForSecond: true } : undefined,
      }),
    // The batch id (given, or the default digest of the agent, the items and the key) is its idempotency key.
    startBatch: async (options, request = {}) => change<Batch>('/batches', options, request.signal),
    async batch(batchId, options = {}) {
      const answer = await call<Batch>('GET', batchPath(batchId), undefined, [404], options.signal);
      return answer.status === 404 ? undefined : answer.body;
    },
    events: (runId, options = {}) =>
      followEvents(
        { base: endpoint.base, ...(endpoint.fetch && { fetch: endpoint.fetch }), ...(locate && { locate: async () => ({ base: locate().base }) }) },
        runId,
        { ...(options.after !== undefined && { after: options.after }), ...(options.signal && { signal: options.signal }) },
      ),
  };
}
