/**
 * The CLI's own client (and the console's): it speaks to one deployment through the same parts the
 * steps use — the Step Functions API, the ledger, the approval API — and needs a `Ledger` it opens
 * itself. Not part of `savepoint/client`, whose client (`connect`, client/connect.ts) is HTTP only:
 * an application never holds a ledger.
 */
import type { SFNClient } from '@aws-sdk/client-sfn';
import { verifyRun, type RunVerification } from '../lambdas/ledger/seal.js';
import { publicApproval } from '../lambdas/adapters/approval-http.js';
import { loadReport, type RunReport } from '../lambdas/runs/report.js';
import { killChildren } from '../lambdas/runs/child-tree.js';
import type { ChildStarter } from '../lambdas/tools/child-runs.js';
import { abortError } from './runs-api-error.js';
import { engineGone, type Send } from './loopback-request.js';
import type { AgentDefinition } from '../lambdas/define.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { ApprovalRecord, RunRecord } from '../lambdas/records/ledger-records.js';
import { causeMessage, InvalidInputError } from '../lambdas/shared/errors.js';
import { counted } from '../lambdas/shared/text.js';
import { parseOrThrow } from '../lambdas/shared/validation.js';
import { createDecideApproval, MAX_DECISION_REASON, type DecideResult } from '../lambdas/approvals/decision.js';
import { systemClock, type Clock } from '../lambdas/shared/ports.js';
import { decisionProblem, type DecisionMac } from '../lambdas/approvals/decision-mac.js';
import type { ApprovalPolicy, Identity } from '../lambdas/approvals/policy.js';
import { KillReason, modelSpecOf, RunId, RunRequest, runIdOf } from '../lambdas/runs/run-request.js';
import { editedPrefix, forkChanges, forkPrefix, hazardReport, isSameFork, ForkRequest } from '../lambdas/runs/fork.js';
import type { ReplayResult } from '../local/replay/index.js';
import type { StartRunBody } from '../lambdas/runs/start-route.js';
import { lifecycleOf, TERMINAL_LIFECYCLES as TERMINAL, type Lifecycle } from '../lambdas/runs/lifecycle.js';



/** What a caller may see of an approval (never its task token). */
export type PublicApproval = ReturnType<typeof publicApproval>;

/** A run as the client reads it: its lifecycle, its report and the decisions it waits for. */
export interface RunView {
  /** The run's id. */
  runId: string;
  /** Where the run is, in the shape MCP Tasks use. */
  lifecycle: Lifecycle;
  /** savepoint's own status and figures (the run report). */
  report: RunReport;
  /** Decisions the run waits for. */
  approvals: PublicApproval[];
}

/** What `start` starts: a run's input, and optionally its id and settings. */
export interface StartRequest {
  /** The run's input, checked by the agent's `input` schema when the run starts. */
  input: unknown;
  /** The idempotency key of the whole run. @default the agent's `runId(input)` (needs `agent`) */
  runId?: string;
  /** Budgets and other settings for this run (`RunConfig`). */
  config?: Record<string, unknown>;
  /** Resume even though the code changed since the run started. */
  force?: boolean;
}

/**
 * A fork of a run (lambdas/runs/fork.ts): a new run whose turns before `at` are the parent's,
 * copied from its ledger without any call, then live on the deployment's code.
 */
export interface ForkOptions {
  /** The fork's first turn of its own. */
  at: number;
  /** `reuse`: a write the parent made is answered from its record; `dry`: no write is sent. @default 'reuse' */
  effects?: 'reuse' | 'dry';
  /** The fork's budgets count only its own work. @default false: it inherits what the parent spent */
  freshBudget?: boolean;
  /** The fork's run id. @default `<parent>-fork-<at>` */
  runId?: string;
  /** The fork's input instead of the parent's. @default the parent's */
  input?: unknown;
  /** The model of the fork's own turns (`provider:model-id`). @default the parent's */
  model?: string;
  /** Edited results of the tool calls of turn `at - 1`, as the fork's first turn shows them. @default none */
  results?: { call: number; result: unknown }[];
}

/** A decision as the approval API takes it: who decides is who the API authenticated, never a field. */
export interface DecisionBody {
  /** Approve the call, or reject it (the model is told). */
  decision: 'approve' | 'reject';
  /** Why, for the record. @default none */
  reason?: string;
}

/** What `createClient` talks to: one deployment's ledger, Step Functions and approval API. */
export interface ClientParts {
  /** The ledger of the deployment (DynamoDB on AWS; the local engine's otherwise). */
  ledger: Ledger;
  /** The Step Functions API of the deployment and the agent's state machine: what `start` needs. */
  sfn?: SFNClient;
  /** The agent's state machine (its live alias) that `start` starts executions of. */
  stateMachineArn?: string;
  /**
   * Starts runs through the deployment's runs API (`POST /runs`), which records the caller it
   * authenticated as the run's starter (separation of duties); without it, `start` calls
   * StartExecution itself and the run has no recorded starter.
   */
  startRun?: (body: StartRunBody) => Promise<{ runId: string; executionArn: string }>;
  /** Decides an approval through the deployment's approval API (so that the waiting execution resumes). */
  decide?: (approvalId: string, body: DecisionBody) => Promise<DecideResult>;
  /**
   * Who this client decides as when it records decisions in the ledger itself (no approval API),
   * with the key that signs them and the policy. Without an identity such decisions are refused.
   */
  ledgerDecisions?: { identity: Identity; decisionMac?: DecisionMac; policy?: ApprovalPolicy };
  /** The agent the deployment runs: derives run ids, and adds the agent's own summary to reports. */
  agent?: AgentDefinition;
  /**
   * Stops the executions of a cancelled run's child runs (`defineAgentTool`), as the runs API does.
   * @default none: their kills are recorded, and each stops at its next step
   */
  children?: Pick<ChildStarter, 'stop'>;
  /** The clock decisions and reports are timed by. @default the system clock */
  clock?: Clock;
  /** How `wait` waits between two looks at the run. @default 500 ms of real time */
  pause?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

/** The client of one deployment (`createClient`): start, watch, decide and cancel runs. */
export interface SavepointClient {
  /** Starts the run, or resumes it if it is unfinished; a finished run id is a no-op. */
  start(request: StartRequest): Promise<{ runId: string; executionArn: string }>;
  /** The run now, from the ledger; `undefined` for a run id it does not hold. */
  status(runId: string): Promise<RunView | undefined>;
  /** Resolves when the run is no longer working (finished, or waiting for a person when `untilInput`). */
  wait(runId: string, options?: { untilInput?: boolean; signal?: AbortSignal; everyMs?: number }): Promise<RunView>;
  /** Stops the run before its next step; a pending approval of it is rejected so it stops now. */
  cancel(runId: string, options: { by: string; reason?: string }): Promise<RunView>;
  /** The approvals waiting for a decision, in every run of the deployment. */
  approvals(): Promise<PublicApproval[]>;
  /** Approves or rejects a pending approval: through the approval API when there is one, so the waiting execution resumes at once. */
  decide(approvalId: string, decision: 'approve' | 'reject', options?: { reason?: string }): Promise<DecideResult>;
  /**
   * Moves a live run to the deployed code (`savepoint migrate`): a new execution on the newest
   * version takes the run over if that version is `to` and declares the run's version compatible
   * (lambdas/runs/versions.ts); refused, it throws naming why and nothing changes.
   */
  migrate(runId: string, options: { to: string; by: string; signal?: AbortSignal }): Promise<RunView>;
  /**
   * Verifies runs' sealed records (lambdas/ledger/seal.ts): one run, or every run (`'all'`, at most
   * 1,000, newest first). `undefined` for a run id the ledger does not hold.
   */
  verify(runs: string | 'all'): Promise<RunVerification[] | undefined>;
  /**
   * The hazard report of a fork, before it starts: the parent's writes from the fork point on and
   * how the fork treats a repeat of each, then what the fork changes against its parent (the code,
   * the input, the model, edited results). Lines for a person; nothing is started.
   */
  forkReport(parentRunId: string, options: ForkOptions): Promise<string[]>;
  /**
   * Starts a fork of a finished or stopped run (`savepoint fork`): a `StartExecution` whose StartRun
   * copies the parent's turns before `options.at`; refused by StartRun (the execution fails) when
   * this code may not continue them (lambdas/runs/versions.ts) or an edit names no such call. A
   * parent still running is refused before anything starts (`InvalidInputError`). The
   * same fork asked for again (parent, turn, effects, input, model) answers the fork it started and
   * starts nothing; another run under its run id is refused (`InvalidInputError`, naming it).
   *
   * @example
   * const lines = await client.forkReport('day1', { at: 12, effects: 'dry' });
   * console.log(lines.join('\n'));
   * const { runId } = await client.fork('day1', { at: 12, effects: 'dry' });
   * const view = await client.wait(runId);
   */
  fork(parentRunId: string, options: ForkOptions): Promise<{ runId: string; executionArn: string }>;
  /**
   * Replays a finished or stopped run on `agent`'s code with no live call (local/replay/): on this
   * machine's engine, from this client's ledger (a deployed stack's too). `identical`, or the first
   * divergence. Loads the local engine on first use.
   */
  replay(runId: string, options?: { agent?: AgentDefinition }): Promise<ReplayResult>;
}

/**
 * A client of one deployment, local or on AWS.
 *
 * @example
 * ```ts
 * import { createClient } from 'savepoint/client';
 *
 * const client = createClient({ ledger, sfn, stateMachineArn, agent });
 * const { runId } = await client.start({ input: { date: '2026-12-01' } });
 * const view = await client.wait(runId, { untilInput: true });
 * for (const approval of view.approvals) await client.decide(approval.approvalId, 'approve');
 * ```
 */
export function createClient(parts: ClientParts): SavepointClient {
  const clock = parts.clock ?? systemClock;
  const pause = parts.pause ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  // Without an approval API (a process that owns the ledger while no engine runs), the decision
  // is recorded in the ledger and delivered when the run asks again.
  const own = parts.ledgerDecisions;
  const decideInLedger = createDecideApproval({
    ledger: parts.ledger,
    callbacks: { succeed: async () => false, fail: async () => false },
    clock,
    ...(own?.decisionMac && { decisionMac: own.decisionMac }),
    ...(own?.policy && { policy: own.policy }),
  });
  const decide = parts.decide ?? ((approvalId: string, body: DecisionBody) => decideInLedger(approvalId, body, own ? { caller: own.identity } : {}));
  // With the decision key at hand, `verify` checks each approved decision's signature too.
  const checks = own?.decisionMac ? { checkDecision: (approval: ApprovalRecord) => decisionProblem(own.decisionMac!, approval) } : {};

  const status = async (runId: string): Promise<RunView | undefined> => {
    const report = await loadReport(parts.ledger, runId, clock.now(), parts.agent);
    if (!report) return undefined;
    const approvals = (await parts.ledger.listPendingApprovals()).filter((approval) => approval.runId === runId).map(publicApproval);
    return { runId, lifecycle: lifecycleOf(report.status, approvals.length, report.error), report, approvals };
  };

  /** The parent, its calls, and the fork request as StartRun will parse it. */
  const forkOf = async (parentRunId: string, options: ForkOptions) => {
    const parent = await parts.ledger.getRun(parseOrThrow(RunId(), parentRunId, 'runId'));
    if (!parent) throw new InvalidInputError(`runId: no run ${parentRunId}`);
    const { at, effects, freshBudget, results } = options;
    const fork = parseOrThrow(ForkRequest(), { from: parentRunId, at, ...(effects && { effects }), ...(freshBudget && { freshBudget }), ...(results && { results }) }, 'fork');
    // Refused here as StartRun would refuse it: a turn past the run's end, an edit of no such call.
    const { turns, calls } = await parts.ledger.listConversation(parentRunId);
    editedPrefix(forkPrefix({ run: parent, turns, calls }, fork.at), fork);
    return { parent, calls, fork, input: options.input === undefined ? parent.input : options.input };
  };

  return {
    async start(request) {
      const runId = request.runId ?? (parts.agent ? runIdOf(parts.agent, parseOrThrow(parts.agent.input, request.input, `input of agent ${parts.agent.name}`)) : undefined);
      if (!runId) throw new InvalidInputError('runId: required when the client does not know the agent (pass `agent` to createClient)');
      const input = parseOrThrow(RunRequest(), { runId: parseOrThrow(RunId(), runId, 'runId'), input: request.input, config: request.config, force: request.force }, 'run request');
      // A new execution name per start: the run id (not the execution) is the idempotency key, and
      // StartRun joins, resumes or skips a run that exists.
      const name = `${runId}-${clock.now().getTime().toString(36)}`.slice(0, 80);
      if (!parts.startRun && (!parts.sfn || !parts.stateMachineArn)) throw new InvalidInputError('start: this client reaches no engine (no Step Functions API): start one on the state directory, `savepoint serve --agent <name|path>`');
      // An unfinished run is resumed on the version its execution ran, not the newest (that is a
      // migration: `migrate`); `force` resumes it on the newest code all the same.
      const existing = request.force ? undefined : await parts.ledger.getRun(runId);
      const unfinished = existing !== undefined && (existing.status === 'running' || existing.status === 'failed');
      const { StartExecutionCommand, versionOf } = await sfnModules();
      const stateMachineArn = unfinished && parts.sfn && parts.stateMachineArn ? await versionOf(parts.sfn, existing.executionArn, parts.stateMachineArn) : parts.stateMachineArn;
      // Through the runs API when there is one: the run's starter is then who it authenticated.
      if (parts.startRun) return parts.startRun({ ...input, ...(stateMachineArn && { stateMachineArn }), executionName: name });
      const started = await parts.sfn!.send(new StartExecutionCommand({ stateMachineArn: stateMachineArn!, name, input: JSON.stringify(input) }));
      return { runId, executionArn: started.executionArn! };
    },

    status,

    async verify(runs) {
      if (runs !== 'all') {
        const report = await verifyRun(parts.ledger, runs, checks);
        return report.problems.length === 1 && report.records === 0 && /there is no run record/.test(report.problems[0]!) ? undefined : [report];
      }
      // A run whose record fails is verified (and reported) like the others, not the end of the listing.
      const damaged: string[] = [];
      const listed = await parts.ledger.listRuns(1_000, { onDamaged: (runId) => damaged.push(runId) });
      const reports: RunVerification[] = [];
      for (const runId of [...damaged, ...listed.map((run) => run.runId)]) reports.push(await verifyRun(parts.ledger, runId, checks));
      return reports;
    },

    async wait(runId, options = {}) {
      for (;;) {
        const view = await status(runId);
        if (view && (TERMINAL.includes(view.lifecycle) || (options.untilInput && view.lifecycle === 'input_required'))) return view;
        if (options.signal?.aborted) throw abortError(`stopped waiting for run ${runId}`, options.signal);
        await pause(options.everyMs ?? 500, options.signal);
      }
    },

    async cancel(runId, { by, reason = '' }) {
      parseOrThrow(KillReason(), reason, 'reason');
      // The first kill stands; the pending approvals are rejected by whoever cancels.
      const run = await parts.ledger.getRun(runId);
      if (!run) throw new InvalidInputError(`runId: no run ${runId}`);
      if (run.status !== 'running') throw new InvalidInputError(`runId: run ${runId} is ${run.status}, not running`);
      // The view is read before the kill: once it is applied, the run stops at its next step, and
      // a local engine that ends with its run (`savepoint run`) may be gone before any later read.
      const before = (await status(runId))!;
      const flag = { by, at: clock.now().toISOString(), reason };
      await parts.ledger.killRun(runId, flag);
      // Its child runs with it: recorded, and their executions stopped where this client reaches them.
      await killChildren({ ledger: parts.ledger, ...(parts.children && { children: parts.children }), now: clock.now() }, parts.agent?.name === run.agent ? parts.agent : undefined, run, flag);
      const cancelled = (view: RunView) => ({ ...view, report: { ...view.report, killed: view.report.killed ?? flag }, lifecycle: lifecycleOf(view.report.status, 0, view.report.error), approvals: [] });
      try {
        // A run waiting on an approval would not reach its next step until the approval is decided
        // (approvals asked for since the first read included).
        const killed = (await status(runId))!;
        const refused: string[] = [];
        for (const approval of killed.approvals) {
          const result = await decide(approval.approvalId, { decision: 'reject', reason: killRejection(by, reason) });
          // Decided meanwhile (409) wakes the run as well, and so does the expiry of one past its
          // deadline (410); any other refusal leaves it waiting for a person.
          if (!result.ok && result.status !== 409 && result.status !== 410) refused.push(`${approval.approvalId} (${result.message}; decide by ${approval.decideBy})`);
        }
        if (refused.length > 0) {
          throw new InvalidInputError(`run ${runId} is killed, but it waits for ${counted(refused.length, 'approval')} ${by} may not reject: ${refused.join(', ')}; it stops once an approver decides or the approval expires`);
        }
        return cancelled(killed);
      } catch (error) {
        // The kill is applied; an engine that ended with the run it stopped is not a failure of it.
        if (!engineGone(error)) throw error;
        return cancelled(before);
      }
    },

    approvals: async () => (await parts.ledger.listPendingApprovals()).map(publicApproval),

    decide: (approvalId, decision, options = {}) => decide(approvalId, { decision, ...options }),

    async forkReport(parentRunId, options) {
      const { parent, calls, fork, input } = await forkOf(parentRunId, options);
      const changes = parts.agent ? forkChanges(parent, { agent: parts.agent, input, ...(options.model && { model: options.model }), fork }) : [];
      return hazardReport(calls, fork, changes);
    },

    async fork(parentRunId, options) {
      const { fork, input } = await forkOf(parentRunId, options);
      if (!parts.sfn || !parts.stateMachineArn) throw new InvalidInputError('fork: this client reaches no engine (no Step Functions API): start one on the state directory, `savepoint serve --agent <name|path>`');
      const runId = parseOrThrow(RunId(), options.runId ?? `${parentRunId}-fork-${options.at}`.slice(0, 80), 'runId');
      // A fork is a run of its own: a run id that names another run would start (resume) that run instead.
      if (runId === parentRunId) throw new InvalidInputError(`runId: ${runId} is the parent's own run id; a fork needs a run id of its own`);
      const existing = await parts.ledger.getRun(runId);
      // The same fork asked for again is answered as it is: a new execution of it, StartRun would refuse.
      if (existing && isSameFork(existing, { fork, input, model: options.model && modelSpecOf(options.model, 'model') })) return { runId, executionArn: existing.executionArn };
      if (existing) throw new InvalidInputError(`runId: run ${runId} exists already (${existing.forkedFrom ? `a fork of ${existing.forkedFrom.runId} at turn ${existing.forkedFrom.turn}, effects ${existing.forkedFrom.effects}` : 'not this fork'}); a fork needs a run id of its own`);
      const request = parseOrThrow(RunRequest(), { runId, input, fork, ...(options.model && { model: options.model }) }, 'fork request');
      const name = `${runId}-${clock.now().getTime().toString(36)}`.slice(0, 80);
      const { StartExecutionCommand, executionArnOf } = await sfnModules();
      const started = await parts.sfn.send(new StartExecutionCommand({ stateMachineArn: parts.stateMachineArn, name, input: JSON.stringify(request) }));
      return { runId, executionArn: started.executionArn ?? executionArnOf(parts.stateMachineArn, name) };
    },

    async replay(runId, options = {}) {
      const agent = options.agent ?? parts.agent;
      if (!agent) throw new InvalidInputError('agent: replay needs the code to replay on (pass `agent` here or to createClient)');
      const { replayRun } = await import('../local/replay/index.js');
      return replayRun({ agent, source: parts.ledger, runId: parseOrThrow(RunId(), runId, 'runId') });
    },

    async migrate(runId, { to, by, signal }) {
      const run = await parts.ledger.getRun(parseOrThrow(RunId(), runId, 'runId'));
      if (!run) throw new InvalidInputError(`runId: no run ${runId}`);
      if (run.status !== 'running') throw new InvalidInputError(`runId: run ${runId} is ${run.status}; only a live run is migrated`);
      if (!parts.sfn || !parts.stateMachineArn) throw new InvalidInputError('migrate: this client reaches no engine (no Step Functions API): start the new version on the state directory, `savepoint serve --agent <its module>`');
      const input = parseOrThrow(RunRequest(), { runId, input: run.input, migrate: { to, by } }, 'migrate request');
      const name = `${runId}-m${(run.migrations?.length ?? 0) + 1}-${clock.now().getTime().toString(36)}`.slice(0, 80);
      const { DescribeExecutionCommand, StartExecutionCommand, executionArnOf } = await sfnModules();
      const started = await parts.sfn.send(new StartExecutionCommand({ stateMachineArn: parts.stateMachineArn, name, input: JSON.stringify(input) }));
      const executionArn = started.executionArn ?? executionArnOf(parts.stateMachineArn, name);
      // The new code decides (its StartRun): the run is migrated once it names the new execution,
      // refused when the execution ends without taking it.
      for (;;) {
        const now = await parts.ledger.getRun(runId);
        if (now?.executionArn === executionArn) return (await status(runId))!;
        const execution = await parts.sfn.send(new DescribeExecutionCommand({ executionArn }));
        if (execution.status !== 'RUNNING') {
          throw new InvalidInputError(causeMessage(execution.cause) || `migrate: execution ${name} ended ${execution.status} without taking the run over`);
        }
        if (signal?.aborted) throw abortError(`stopped waiting for the migration of run ${runId}`, signal);
        await pause(250, signal);
      }
    },
  };
}

/**
 * Starts runs through a runs API (`POST {url}`, the approval API's `/runs`): its 4xx answers are
 * errors naming the problem, as the API words them. `send`: `fetch`, or, for a runs API on this
 * machine, client/loopback-request.ts's `loopbackRequest`.
 */
export function runsApiStarter(url: string, send: Send = fetch): NonNullable<ClientParts['startRun']> {
  return async (body) => {
    const response = await send(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const answer = JSON.parse(await response.text()) as { runId?: string; executionArn?: string; message?: string };
    if (!response.ok || !answer.runId || !answer.executionArn) throw new InvalidInputError(answer.message ?? `runs API answered ${response.status}`);
    return { runId: answer.runId, executionArn: answer.executionArn };
  };
}

/** The runs API of an approval API (`…/approvals` → `…/runs`). */
export function runsUrlOf(approvalApiUrl: string): string {
  return approvalApiUrl.replace(/\/approvals\/?$/, '/runs');
}

/**
 * Decides through an approval API (`POST {url}/{approvalId}`): the route a person's decision takes,
 * which also resumes the waiting execution. 404 and 409 are answers, anything else an error.
 */
export function approvalApiDecider(url: string, fetchImpl: typeof fetch = fetch): NonNullable<ClientParts['decide']> {
  return async (approvalId, body) => {
    const response = await fetchImpl(`${url}/${encodeURIComponent(approvalId)}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const answer = (await response.json()) as Record<string, unknown> & { message?: string; approval?: ApprovalRecord; delivered?: boolean };
    const refused = [401, 403, 404, 409, 410] as const;
    const status = refused.find((code) => code === response.status);
    if (status) return { ok: false, status, message: answer.message ?? `approval API answered ${status}`, ...(answer.approval && { approval: answer.approval }) };
    if (!response.ok) throw new InvalidInputError(answer.message ?? `approval API answered ${response.status}`);
    // A first approval of two (202) says so: the caller must not read its `pending` as nothing done.
    const { delivered, waitingForSecond, ...approval } = answer;
    return { ok: true, approval: approval as unknown as ApprovalRecord, delivered: Boolean(delivered), ...(waitingForSecond === true && { waitingForSecond: true }) };
  };
}

/**
 * The Step Functions SDK's commands, loaded by what starts executions: a client that only reads
 * the ledger (status, approvals, decisions) does not load the SDK.
 */
async function sfnModules() {
  const [{ DescribeExecutionCommand, StartExecutionCommand }, { executionArnOf, versionOf }] = await Promise.all([
    import('@aws-sdk/client-sfn'),
    import('../lambdas/adapters/sfn.js'),
  ]);
  return { DescribeExecutionCommand, StartExecutionCommand, executionArnOf, versionOf };
}

/**
 * The reason a kill records on the approvals it rejects: who killed the run and why, cut to what a
 * decision records. A kill's own reason may take that whole length, and the prefix made the
 * rejection too long: it was refused, and the run went on waiting for its approval after the kill.
 */
export function killRejection(by: string, reason: string): string {
  const text = `run killed by ${by}${reason ? `: ${reason}` : ''}`;
  if (text.length <= MAX_DECISION_REASON) return text;
  const cut = text.slice(0, MAX_DECISION_REASON - 1);
  // Not half a surrogate pair: the cut ends before it.
  return `${/[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut}…`;
}
