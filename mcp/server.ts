/**
 * `savepoint mcp`: each agent as an MCP tool whose call is a durable run, on the MCP Tasks
 * lifecycle (specification 2025-11-25, "Tasks"; the official SDK's experimental tasks API).
 *
 * A task-augmented `tools/call` starts a run and answers with a task whose id is the run's id;
 * `tasks/get`, `tasks/result` and `tasks/cancel` read, wait for and kill the run through the runs
 * API (`McpRuns`, the public client). The run is the task: its state lives in the ledger, so a task
 * outlives this process, and nothing here decides anything a run does.
 *
 * A waiting approval shows as `input_required`. Where the client supports elicitation, the person
 * at the client is asked (a form: approve or reject, and a reason), and their answer is sent as a
 * decision through the runs API, which checks it as it checks any other (the agent's approvers;
 * separation of duties, under which whoever started the task cannot decide its approvals). The
 * server never answers an approval itself: a declined or cancelled form decides nothing.
 */
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { InMemoryTaskMessageQueue, type CreateTaskOptions, type TaskStore } from '@modelcontextprotocol/sdk/experimental/tasks';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError, type CallToolResult, type Request, type RequestId, type Result, type ServerNotification, type Task, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { isRefusal } from '../client/runs-api-error.js';
import { TERMINAL_LIFECYCLES, type Lifecycle } from '../lambdas/runs/lifecycle.js';
import { problemsOf } from '../lambdas/shared/validation.js';
import { formatAmount } from '../lambdas/shared/money.js';
import type { RunReport } from '../lambdas/runs/report.js';
import type { ApprovalRecord } from '../lambdas/records/ledger-records.js';

/** A run as the MCP server reads it (the public client's `Run` is one). */
export interface McpRun {
  /** The run's id: the task's. */
  runId: string;
  /** Where the run is: the task's status. */
  lifecycle: Lifecycle;
  /** The run's report: the task's result. */
  report: RunReport;
  /** The decisions it waits for. */
  approvals: readonly PublicApproval[];
}

/** An approval as a caller sees it. */
type PublicApproval = Omit<ApprovalRecord, 'kind'>;

/** What the person at the client is shown of an approval (a run's approval, or its `approval.waiting` event). */
type AskedApproval = Pick<PublicApproval, 'approvalId' | 'summary'> & Partial<Pick<PublicApproval, 'toolName' | 'amount' | 'description'>>;

/** One event of a run's progress stream (the public client's `RunEvent`). */
export interface McpRunEvent {
  /** Its fixed position in the run. */
  readonly id: string;
  /** What happened: `run.started`, `model.turn`, `tool.result`, `approval.waiting`, … `run.finished`. */
  readonly type: string;
  /** Its figures. */
  readonly data: Readonly<Record<string, unknown>>;
}

/** What the MCP server needs of the runs API: the public client's methods it calls (a `connect` client is one). */
export interface McpRuns {
  /** Starts a run of `agent` with this id (the task's). */
  start(request: { agent: string; input: unknown; runId: string }): Promise<{ runId: string }>;
  /** The run now; `undefined` when there is no such run. */
  get(runId: string): Promise<McpRun | undefined>;
  /** Kills the run, recorded with why. */
  cancel(runId: string, options: { reason: string }): Promise<unknown>;
  /** The run's progress stream until its end (progress notifications, approvals); without it the run is read every poll interval. */
  events?(runId: string, options: { signal?: AbortSignal }): AsyncIterable<McpRunEvent>;
  /** Decides an approval as the runs API's caller (its checks apply). */
  decide(approvalId: string, decision: 'approve' | 'reject', options?: { reason?: string }): Promise<unknown>;
}

/** An agent served as an MCP tool. */
export interface McpAgent {
  /** The tool's name: the agent's. */
  readonly name: string;
  /** The agent's input schema: the tool's input schema. */
  readonly input: z.ZodType;
  /** What the tool does, for the model that calls it. @default "Starts a durable run of the agent <name>." */
  readonly description?: string;
}

/** What `savepointMcpServer` serves, and through what. */
export interface SavepointMcpOptions {
  /** The runs API the tasks' runs go to (`connect` from `savepoint/client`). */
  readonly runs: McpRuns;
  /** The agents served, each as a tool (an `AgentDefinition` is one). */
  readonly agents: readonly McpAgent[];
  /**
   * What the server calls itself (MCP `serverInfo`).
   * @default { name: 'savepoint', version: '0' }
   */
  readonly info?: { name: string; version: string };
  /** How often a client is told to poll a task, and this server looks at a run it follows. @default 1000 */
  readonly pollIntervalMs?: number;
  /** Waits between two looks at a followed run. @default a timer of `ms` */
  readonly pause?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Where the server notes what it could not do (a refused decision). @default nothing */
  readonly log?: (line: string) => void;
}

/** The task id of a run this session started: a session's runs are named after it, and no other session sees them. */
const RUN_PREFIX = 'mcp-';

/**
 * An MCP server of savepoint agents. Connect it to a transport (stdio, Streamable HTTP) with
 * `server.connect(transport)`; one per session for Streamable HTTP.
 *
 * @example
 * ```ts
 * import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
 * import { connect } from 'savepoint/client';
 * import { savepointMcpServer } from 'savepoint/mcp';
 * import refunds from './agents/refunds.js';
 *
 * const client = await connect({ stateDir: '.savepoint' });
 * await savepointMcpServer({ runs: client, agents: [refunds] }).connect(new StdioServerTransport());
 * ```
 */
export function savepointMcpServer(options: SavepointMcpOptions): Server {
  const pollInterval = options.pollIntervalMs ?? 1000;
  const pause = options.pause ?? sleep;
  const stopped = new AbortController();
  const agents = new Map(options.agents.map((agent) => [agent.name, agent]));
  // Runs whose follower has not yet told the client all it saw (its last progress).
  const following = new Set<string>();
  const tools: Tool[] = options.agents.map((agent) => ({
    name: agent.name,
    description: agent.description ?? `Starts a durable run of the agent ${agent.name}.`,
    inputSchema: jsonSchemaOf(agent.input),
    execution: { taskSupport: 'required' },
  }));
  const server = new Server(options.info ?? { name: 'savepoint', version: '0' }, {
    capabilities: { tools: {}, tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } },
    taskStore: runsTaskStore(options.runs, pollInterval, (runId) => following.has(runId)),
    // Requests of a task (an approval's elicitation) reach the client on its tasks/result stream.
    taskMessageQueue: new InMemoryTaskMessageQueue(),
    defaultTaskPollInterval: pollInterval,
  });
  server.onclose = () => stopped.abort();
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
  // The SDK's McpServer answers invalid arguments of a task-augmented call with a tool error, which
  // is no task (its own check then replaces it with a message that names nothing): here such a
  // call is refused as invalid params, naming the field, before anything starts.
  server.setRequestHandler(AnyToolsCall, async (raw, extra) => {
    // The SDK's Server checked it against CallToolRequestSchema before this handler (its refusal is invalid params).
    const request = CallToolRequestSchema.parse(raw);
    const agent = agents.get(request.params.name);
    if (!agent) throw new McpError(ErrorCode.InvalidParams, `name: no agent ${request.params.name} (tools/list names them)`);
    if (!request.params.task) throw new McpError(ErrorCode.MethodNotFound, `${agent.name} is a durable run: call it as a task (params.task)`);
    const parsed = agent.input.safeParse(request.params.arguments ?? {});
    if (!parsed.success) throw new McpError(ErrorCode.InvalidParams, `arguments of ${agent.name}: ${problemsOf(parsed.error)}`);
    const runId = `${RUN_PREFIX}${sessionTag(extra.sessionId)}-${randomUUID().replaceAll('-', '')}`;
    if (extra.signal.aborted) throw callCancelled();
    await options.runs.start({ agent: agent.name, input: parsed.data, runId }).catch((error: unknown) => {
      // The runs API's refusal of what was asked (a 4xx: an input too large to run) is the call's params', said as such; nothing started.
      if (isRefusal(error)) throw new McpError(ErrorCode.InvalidParams, `arguments of ${agent.name}: ${error.message}`);
      throw error;
    });
    const task = await extra.taskStore!.createTask({ ttl: null, pollInterval, context: { runId } });
    if (extra.signal.aborted) {
      void killUnanswered(runId, { runs: options.runs, everyMs: pollInterval, pause, log: options.log ?? (() => undefined) });
      throw callCancelled();
    }
    const progressToken = request.params._meta?.progressToken;
    following.add(runId);
    void follow(runId, {
      runs: options.runs,
      pause: (ms) => pause(ms, stopped.signal),
      everyMs: pollInterval,
      signal: stopped.signal,
      // Related to the task: delivered on its tasks/result stream (the call's own stream has ended).
      notify: (notification) => server.notification(notification, { relatedTask: { taskId: runId } }),
      ...(progressToken !== undefined && { progressToken }),
      elicit: server.getClientCapabilities()?.elicitation ? (approval, withdrawn) => askPerson(server, runId, approval, withdrawn) : undefined,
      log: options.log ?? (() => undefined),
    })
      .catch((error: unknown) => options.log?.(`following run ${runId}: ${String(error)}`))
      .finally(() => following.delete(runId));
    return { task } as never; // a CreateTaskResult: the SDK's request types name only CallToolResult
  });
  return server;
}

/**
 * Any `tools/call` request, for the SDK's Protocol to hand on unchecked: it parses a request with
 * its handler's schema and answers a failure as an internal error (-32603), so `arguments` that is
 * no object (`"arguments": "x"`) was a server fault. The Server's own tools/call wrapper then checks
 * it against CallToolRequestSchema and refuses it as invalid params (-32602), naming the field.
 */
const AnyToolsCall = z.object({ method: z.literal('tools/call'), params: z.looseObject({}).optional() });

/** What a cancelled call rejects with (the SDK sends no answer to a cancelled request). */
const callCancelled = () => new McpError(ErrorCode.ConnectionClosed, 'Request was cancelled');

/** The kill's reason of a run whose tools/call the client cancelled before it was answered. */
const CANCELLED_CALL = 'its tools/call was cancelled by the MCP client before the task was returned';

/**
 * Kills the run of a call the client cancelled (notifications/cancelled) while the run started: the
 * client gets no task, so no one would follow, see or cancel the run, which would act unseen. The
 * kill, recorded with why, waits for the run's record, and not for the session (its client may
 * close at once).
 */
async function killUnanswered(runId: string, how: { runs: McpRuns; everyMs: number; pause: (ms: number, signal: AbortSignal) => Promise<void>; log: (line: string) => void }): Promise<void> {
  const never = new AbortController().signal;
  try {
    if (await recorded(runId, { runs: how.runs, everyMs: how.everyMs, pause: (ms) => how.pause(ms, never), signal: never })) await how.runs.cancel(runId, { reason: CANCELLED_CALL });
  } catch (error) {
    how.log(`killing run ${runId}, whose call was cancelled: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** An agent's input as the JSON Schema of its tool (an object, as MCP requires). */
function jsonSchemaOf(input: z.ZodType): Tool['inputSchema'] {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(input, { io: 'input' }) as Record<string, unknown>;
  return { ...schema, type: 'object' } as Tool['inputSchema'];
}

/** The part of a session's id a run's id carries (run ids are 80 characters at most). */
function sessionTag(sessionId: string | undefined): string {
  return sessionId === undefined ? 'stdio' : sessionId.replace(/[^A-Za-z0-9]/g, '').slice(0, 12) || 'session';
}

/** Whether a task id names a run the session started (`sessionTag`), so that it may see it. */
function ownRun(taskId: string, sessionId: string | undefined): boolean {
  return taskId.startsWith(`${RUN_PREFIX}${sessionTag(sessionId)}-`);
}

/** A run's task status: its lifecycle, or cancelled once a kill is recorded (taskOf). */
function taskStatus(view: McpRun): Lifecycle {
  return view.report.killed ? 'cancelled' : view.lifecycle;
}

/**
 * The MCP task of a run: its lifecycle, a kill counted as cancelled as soon as it is recorded, and
 * for good (MCP Tasks: a cancelled task "MUST remain in cancelled status even if execution
 * continues to completion"): a run killed in its last step, which it finishes and succeeds, is a
 * cancelled task still.
 */
export function taskOf(view: McpRun, pollInterval: number): Task {
  const status = taskStatus(view);
  const waiting = view.approvals[0];
  const statusMessage =
    status === 'input_required' && waiting
      ? `waiting for a person to decide approval ${waiting.approvalId}: ${waiting.summary}`
      : status === 'failed' || status === 'cancelled'
        ? (view.report.stopReason ?? view.report.error?.cause ?? view.report.status)
        : undefined;
  return {
    taskId: view.runId,
    status,
    ttl: null, // the run stays in the ledger until it is pruned
    createdAt: view.report.createdAt,
    lastUpdatedAt: view.report.finishedAt ?? new Date().toISOString(),
    pollInterval,
    ...(statusMessage && { statusMessage }),
  };
}

/** The tool result of a finished run: its report, in words and as structured content. */
export function resultOf(view: McpRun): CallToolResult {
  const { report } = view;
  const line = `run ${report.runId} ${report.status}${report.stopReason ? ` (${report.stopReason})` : ''}: ${report.steps} steps, $${report.dollars.toFixed(4)}`;
  return {
    content: [{ type: 'text', text: report.summary ? `${line}\n${JSON.stringify(report.summary)}` : line }],
    structuredContent: report as unknown as Record<string, unknown>,
    isError: taskStatus(view) !== 'completed', // a task cancelled before its run's end stays an error
  };
}

/**
 * The runs as the SDK's task store: a task is a run (its id the run's), read and killed through the
 * runs API; nothing is kept here. A run finishes by itself, so results are never stored.
 */
function runsTaskStore(runs: McpRuns, pollInterval: number, following: (runId: string) => boolean): TaskStore {
  // The runs this server started, by session, newest first: a run started a moment ago may not be
  // in the ledger yet (its first step records it), and is working meanwhile.
  const started = new Map<string, { runId: string; at: string }[]>();
  const startedHere = (taskId: string, sessionId: string | undefined) => started.get(sessionId ?? '')?.find((entry) => entry.runId === taskId);
  const task = async (taskId: string, sessionId: string | undefined): Promise<Task | null> => {
    if (!ownRun(taskId, sessionId)) return null;
    const found = await runs.get(taskId);
    if (found) {
      const task = taskOf(found, pollInterval);
      // Finished, but its follower has still to queue what it saw last (tasks/result would drop
      // it): working a moment longer. A cancel shows at once: its caller asked for it.
      return (task.status === 'completed' || task.status === 'failed') && following(taskId) ? { ...task, status: 'working' } : task;
    }
    const here = startedHere(taskId, sessionId);
    return here ? { taskId, status: 'working', ttl: null, createdAt: here.at, lastUpdatedAt: here.at, pollInterval } : null;
  };
  return {
    async createTask(options: CreateTaskOptions, _requestId: RequestId, _request: Request, sessionId?: string) {
      const runId = String(options.context?.['runId']);
      const key = sessionId ?? '';
      started.set(key, [{ runId, at: new Date().toISOString() }, ...(started.get(key) ?? [])]);
      return (await task(runId, sessionId))!;
    },
    getTask: task,
    async getTaskResult(taskId, sessionId): Promise<Result> {
      const found = ownRun(taskId, sessionId) ? await runs.get(taskId) : undefined;
      if (!found) throw new Error(`no task ${taskId}`);
      return resultOf(found);
    },
    async storeTaskResult() {
      throw new Error('a run stores its own result');
    },
    async updateTaskStatus(taskId, status, statusMessage, sessionId) {
      // The SDK calls this for tasks/cancel only; a run's other states are its own.
      if (status !== 'cancelled') throw new Error(`a run's status is its own (asked to set ${status})`);
      if (!ownRun(taskId, sessionId)) throw new Error(`no task ${taskId}`);
      await runs.cancel(taskId, { reason: statusMessage ?? 'cancelled by its MCP client' }).catch(async (error: unknown) => {
        // A run that ended before the kill (while its follower still reported it working): the
        // refusal MCP Tasks names for a task in a terminal status, invalid params, not a failure.
        const ended = await runs.get(taskId);
        if (ended && TERMINAL_LIFECYCLES.includes(ended.lifecycle)) throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task ${taskId}: already in terminal status ${taskStatus(ended)}`);
        throw error;
      });
    },
    async listTasks(cursor, sessionId) {
      // The tasks this server started in the session, newest first, 50 a page.
      const all = started.get(sessionId ?? '') ?? [];
      // A cursor is one this server gave: the start of a later page that holds a task (the list
      // only grows). Any other ('', past the end) is refused as MCP Tasks says, not answered with an
      // empty page: the SDK answers whatever this throws as -32602 invalid params ("Failed to list tasks: …").
      const from = cursor === undefined ? 0 : Number(cursor);
      if (cursor !== undefined && !(String(from) === cursor && from > 0 && from % 50 === 0 && from < all.length)) {
        throw new Error(`cursor: not one this server gave (${JSON.stringify(cursor)})`);
      }
      const tasks = (await Promise.all(all.slice(from, from + 50).map((entry) => task(entry.runId, sessionId)))).filter((found): found is Task => found !== null);
      return { tasks, ...(from + 50 < all.length && { nextCursor: String(from + 50) }) };
    },
  };
}

const UNSEEN_LOOKS = 600;

/**
 * Whether a run just started is in the ledger, looked at every `everyMs`: it is not until its first
 * step records it (its reads and events are a 404 until then); one that never appears (its
 * execution failed before) is given up after UNSEEN_LOOKS looks, as is every look once `signal` aborts.
 */
async function recorded(runId: string, how: Pick<Following, 'runs' | 'pause' | 'everyMs' | 'signal'>): Promise<boolean> {
  for (let unseen = 0; !(await how.runs.get(runId)); unseen++) {
    if (how.signal.aborted || unseen >= UNSEEN_LOOKS) return false;
    await how.pause(how.everyMs);
  }
  return true;
}

interface Following {
  runs: McpRuns;
  pause: (ms: number) => Promise<void>;
  everyMs: number;
  signal: AbortSignal;
  notify: (notification: ServerNotification) => Promise<void>;
  progressToken?: string | number;
  /** Asks the person at the client about an approval, until `withdrawn` aborts; absent when the client cannot be asked. */
  elicit: ((approval: AskedApproval, withdrawn: AbortSignal) => Promise<{ decision: 'approve' | 'reject'; reason?: string } | undefined>) | undefined;
  log: (line: string) => void;
}

/**
 * Follows a run to its end: progress notifications as it goes, and each approval it waits for put
 * to the person at the client (once), their answer sent as a decision. From the run's event stream
 * where the runs API serves one (progress: the events so far); else by reading the run every
 * `everyMs` (progress: its steps).
 */
async function follow(runId: string, how: Following): Promise<void> {
  if (!(await recorded(runId, how))) return;
  // Each form put to the person, withdrawn once its approval no longer waits (decided elsewhere: the
  // approval page, `savepoint approve`; expired; the run ended): an unanswered form would hold the
  // follower, and with it the task's end, for ever.
  const asked = new Map<string, AbortController>();
  const decisions: Promise<void>[] = [];
  const ask = (approval: AskedApproval) => {
    if (!how.elicit || asked.has(approval.approvalId)) return;
    const form = new AbortController();
    asked.set(approval.approvalId, form);
    decisions.push(decideAsked(approval, form.signal, how));
  };
  const withdraw = (approvalId: string) => asked.get(approvalId)?.abort(new Error(`approval ${approvalId} no longer waits`));
  const progress = (progress: number, message: string) =>
    how.progressToken === undefined ? Promise.resolve() : how.notify({ method: 'notifications/progress', params: { progressToken: how.progressToken, progress, message } });
  if (how.runs.events) {
    let seen = 0;
    for await (const event of how.runs.events(runId, { signal: how.signal })) {
      await progress(++seen, describeEvent(event));
      if (event.type === 'approval.waiting') ask(event.data as unknown as AskedApproval);
      if (event.type === 'approval.decided') withdraw(String(event.data['approvalId']));
    }
  } else {
    let steps = -1;
    while (!how.signal.aborted) {
      const view = await how.runs.get(runId);
      if (!view) return;
      if (view.report.steps !== steps) await progress((steps = view.report.steps), `${steps} steps, ${view.lifecycle}`);
      if (view.lifecycle === 'completed' || view.lifecycle === 'failed' || view.lifecycle === 'cancelled') break;
      for (const approval of view.approvals) ask(approval);
      for (const approvalId of asked.keys()) if (!view.approvals.some((approval) => approval.approvalId === approvalId)) withdraw(approvalId);
      await how.pause(how.everyMs);
    }
  }
  for (const approvalId of asked.keys()) withdraw(approvalId);
  await Promise.all(decisions);
}

/** Puts one approval to the person at the client; their answer, if any, is sent as a decision. */
async function decideAsked(approval: AskedApproval, withdrawn: AbortSignal, how: Following): Promise<void> {
  let answer: Awaited<ReturnType<NonNullable<Following['elicit']>>>;
  try {
    answer = await how.elicit!(approval, withdrawn);
  } catch (error) {
    if (withdrawn.aborted || how.signal.aborted) return; // decided elsewhere, the run ended, or the session: nobody to ask any more
    how.log(`approval ${approval.approvalId}: the person could not be asked: ${error instanceof Error ? error.message : String(error)}`);
    return;
  }
  try {
    if (!answer) return; // declined or dismissed: nobody decided; it waits for another decider or its deadline
    await how.runs.decide(approval.approvalId, answer.decision, answer.reason === undefined ? {} : { reason: answer.reason });
  } catch (error) {
    how.log(`approval ${approval.approvalId}: the decision was refused: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** A progress message: what the event says, in a few words. */
function describeEvent(event: McpRunEvent): string {
  const { data } = event;
  const name = data['toolName'] ?? data['name']; // an approval names its tool toolName, a call name
  const tool = typeof name === 'string' ? ` ${name}` : '';
  return `${event.type}${tool}`;
}

/** The form the person at the client answers: approve or reject, and why. */
const DECISION_FORM = {
  type: 'object',
  properties: {
    decision: { type: 'string', title: 'Decision', enum: ['approve', 'reject'], description: 'Approve the call, or reject it (the agent is told).' },
    reason: { type: 'string', title: 'Reason', description: 'Why, for the record.' },
  },
  required: ['decision'],
} as const;

/** Puts an approval to the person at the client (elicitation, related to the run's task). */
async function askPerson(server: Server, runId: string, approval: AskedApproval, withdrawn: AbortSignal): Promise<{ decision: 'approve' | 'reject'; reason?: string } | undefined> {
  const amount = approval.amount ? ` (${formatAmount(approval.amount)})` : '';
  const result = await server.elicitInput(
    {
      mode: 'form',
      message: `Run ${runId} asks ${approval.toolName ? `to ${approval.toolName}` : 'for more budget'}: ${approval.summary}${amount}. ${approval.description ?? ''}`.trim(),
      requestedSchema: DECISION_FORM as never,
    },
    { relatedTask: { taskId: runId }, signal: withdrawn },
  );
  if (result.action !== 'accept') return undefined;
  const decision = result.content?.['decision'];
  if (decision !== 'approve' && decision !== 'reject') return undefined;
  const reason = result.content?.['reason'];
  return { decision, ...(typeof reason === 'string' && reason !== '' && { reason }) };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });
}
