import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema, ListTasksResultSchema } from '@modelcontextprotocol/sdk/experimental/tasks';
import { CallToolResultSchema, ElicitRequestSchema, type ElicitRequest } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { approvalApiDecider, createClient, type SavepointClient } from '../../client/ledger-client.js';
import { RunsApiError } from '../../client/runs-api-error.js';
import { serveMcpHttp, type McpHttpEndpoint } from '../../mcp/http.js';
import { savepointMcpServer, type McpRuns } from '../../mcp/server.js';
import { duplicatePayments, sampleDay, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * `savepoint mcp` over Streamable HTTP on a loopback socket, driven by the official MCP SDK's own
 * client: each agent a task-augmented tool, a run per task, approvals put to the client's user
 * by elicitation, cancellation a recorded kill.
 */
let harness: Harness;
let client: SavepointClient;
let endpoint: McpHttpEndpoint;
const credential = 'test-credential-0123456789abcdef';
const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The runs port over the application client (the runs API's checks apply to its decisions). */
function runsOf(app: SavepointClient): McpRuns {
  return {
    start: ({ input, runId }) => app.start({ input, runId, config: { approvalTimeoutSeconds: 3600 } }),
    get: (runId) => app.status(runId),
    cancel: (runId, { reason }) => app.cancel(runId, { by: 'mcp-client', reason }),
    decide: async (approvalId, decision, options) => {
      const result = await app.decide(approvalId, decision, options);
      if (!result.ok) throw new Error(`${result.status}: ${result.message}`);
      return result;
    },
  };
}

beforeEach(async () => {
  harness = await startHarness();
  client = createClient({
    ledger: harness.stack.ledger,
    sfn: harness.stack.sfn,
    stateMachineArn: harness.stack.stateMachineArn,
    decide: approvalApiDecider(harness.stack.endpoints.approvals),
    agent: refundReconciler,
    pause: nextTick,
  });
  endpoint = await serveMcpHttp({
    credential,
    serverForSession: () => savepointMcpServer({ runs: runsOf(client), agents: [refundReconciler], pollIntervalMs: 5, pause: () => nextTick() }),
  });
});
afterEach(async () => {
  await endpoint.close();
  await harness.stack.close();
});

async function mcpClient(onElicit?: (request: ElicitRequest, extra: { signal: AbortSignal }) => Promise<{ action: 'accept' | 'decline' | 'cancel'; content?: Record<string, string> }>): Promise<Client> {
  const mcp = new Client({ name: 'savepoint-test', version: '1.0.0' }, { capabilities: onElicit ? { elicitation: { form: {} } } : {} });
  if (onElicit) mcp.setRequestHandler(ElicitRequestSchema, onElicit);
  await mcp.connect(new StreamableHTTPClientTransport(new URL(endpoint.url), { requestInit: { headers: { authorization: `Bearer ${credential}` } } }));
  return mcp;
}

async function startTask(mcp: Client, args: Record<string, unknown>): Promise<string> {
  const created = await mcp.request({ method: 'tools/call', params: { name: 'refund-reconciler', arguments: args, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
  return created.task.taskId;
}

describe('savepoint mcp (Streamable HTTP, the official SDK client)', () => {
  it("lists each agent as a tool whose input schema is the agent's, calls it as a task, asks the user each approval, and returns the run's report", async () => {
    const asked: string[] = [];
    const mcp = await mcpClient(async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { decision: 'approve', reason: 'checked by the test' } };
    });
    const { tools } = await mcp.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['refund-reconciler']);
    expect(tools[0]).toMatchObject({ execution: { taskSupport: 'required' }, inputSchema: { type: 'object', properties: { date: expect.any(Object) } } });

    const taskId = await startTask(mcp, { date: sampleDay.date });
    expect(taskId).toMatch(/^mcp-[A-Za-z0-9]{1,12}-[0-9a-f]{32}$/);
    const result = await mcp.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.isError).toBe(false);
    expect(result.structuredContent).toMatchObject({ runId: taskId, status: 'succeeded', summary: { issued: 18 } });
    expect((await mcp.experimental.tasks.getTask(taskId)).status).toBe('completed');
    // Both approvals were put to the user, and decided by them through the runs API.
    expect(asked).toHaveLength(2);
    expect(asked[0]).toMatch(new RegExp(`^Run ${taskId} asks to issue_refund: `));
    const decided = (await client.status(taskId))!.report.approvals;
    expect(decided).toMatchObject({ total: 2, approved: 2, pending: 0 });
    expect(duplicatePayments(harness.stack)).toEqual([]);
    await mcp.close();
  });

  it("sends progress on the call's token as the run takes steps, ending at the run's step count", async () => {
    const mcp = await mcpClient(async () => ({ action: 'accept', content: { decision: 'reject' } }));
    const progress: number[] = [];
    const created = await mcp.request(
      { method: 'tools/call', params: { name: 'refund-reconciler', arguments: { date: sampleDay.date }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
      { onprogress: ({ progress: value }) => void progress.push(value) },
    );
    const result = await mcp.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    const steps = (result.structuredContent as { steps: number }).steps;
    expect(steps).toBeGreaterThan(10);
    expect(progress.length).toBeGreaterThan(1);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.at(-1)).toBe(steps);
    await mcp.close();
  });

  it('shows a waiting approval as input_required to a client that cannot be asked, and decides nothing itself', async () => {
    const mcp = await mcpClient();
    const taskId = await startTask(mcp, { date: sampleDay.date });
    let task = await mcp.experimental.tasks.getTask(taskId);
    while (task.status === 'working') task = (await nextTick(), await mcp.experimental.tasks.getTask(taskId));
    expect(task).toMatchObject({ status: 'input_required', statusMessage: expect.stringMatching(/^waiting for a person to decide approval \S+: /) });
    expect((await client.status(taskId))!.report.approvals).toMatchObject({ approved: 0, rejected: 0, pending: 1 });
    await mcp.close();
  });

  it('a declined form decides nothing: the approval stays pending', async () => {
    let declined = 0;
    const mcp = await mcpClient(async () => (declined++, { action: 'decline' }));
    const taskId = await startTask(mcp, { date: sampleDay.date });
    // The form reaches the client on the task's result stream (MCP Tasks: requests of a task are side-channelled there).
    const result = mcp.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).catch(() => undefined);
    while (declined === 0) await nextTick();
    expect((await mcp.experimental.tasks.getTask(taskId)).status).toBe('input_required');
    expect((await client.status(taskId))!.report.approvals).toMatchObject({ approved: 0, rejected: 0, pending: 1 });
    await mcp.close();
    await result;
  });

  it('cancels a task: the run is killed, recorded with why, and the task is cancelled', async () => {
    const mcp = await mcpClient();
    const taskId = await startTask(mcp, { date: sampleDay.date });
    const cancelled = await mcp.experimental.tasks.cancelTask(taskId);
    expect(cancelled.status).toBe('cancelled');
    const view = await client.wait(taskId);
    expect(view).toMatchObject({ lifecycle: 'cancelled', report: { status: 'killed', killed: { by: 'mcp-client', reason: 'Client cancelled task execution.' } } });
    expect((await mcp.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    await mcp.close();
  });

  it("lists the session's tasks, and refuses a cursor it never gave ('', past the end) as invalid params", async () => {
    const mcp = await mcpClient();
    const taskId = await startTask(mcp, { date: sampleDay.date });
    const listed = await mcp.experimental.tasks.listTasks();
    expect(listed.tasks.map((task) => task.taskId)).toEqual([taskId]);
    expect(listed.nextCursor).toBeUndefined();
    // MCP Tasks (pagination): an invalid or nonexistent cursor is -32602, not an empty page.
    // (The SDK's listTasks drops a '' cursor: asked as a tasks/list request of the SDK's client.)
    for (const cursor of ['500', '', '50', 'abc', '-50']) {
      await expect(mcp.request({ method: 'tasks/list', params: { cursor } }, ListTasksResultSchema), cursor).rejects.toThrow(`MCP error -32602: Failed to list tasks: cursor: not one this server gave (${JSON.stringify(cursor)})`);
    }
    await mcp.close();
  });

  it('refuses bad input naming the field, and starts nothing', async () => {
    const mcp = await mcpClient();
    const before = (await harness.stack.ledger.listRuns(100)).length;
    await expect(startTask(mcp, { date: 7 })).rejects.toThrow(/MCP error -32602: arguments of refund-reconciler: date: /);
    // `arguments` that is no object at all: invalid params naming it, as the SDK's Server words it (not an internal error).
    for (const args of ['2026-11-29', [sampleDay.date], 7]) {
      const call = mcp.request({ method: 'tools/call', params: { name: 'refund-reconciler', arguments: args as never, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
      await expect(call).rejects.toThrow(/^MCP error -32602: (MCP error -32602: )?Invalid tools\/call request: [\s\S]*"arguments"/);
    }
    expect(await harness.stack.ledger.listRuns(100)).toHaveLength(before);
    await mcp.close();
  });

  it('refuses as invalid params, with its message, a call the runs API refuses (a 4xx), and starts nothing', async () => {
    // The runs port of a runs API that refuses the start, as it refuses a run too large to record.
    const refusing = await serveMcpHttp({
      credential,
      serverForSession: () =>
        savepointMcpServer({
          runs: { ...runsOf(client), start: async () => Promise.reject(new RunsApiError(413, "input: the run's record would hold 420000 bytes")) },
          agents: [refundReconciler],
          pollIntervalMs: 5,
        }),
    });
    const mcp = new Client({ name: 'savepoint-test', version: '1.0.0' });
    await mcp.connect(new StreamableHTTPClientTransport(new URL(refusing.url), { requestInit: { headers: { authorization: `Bearer ${credential}` } } }));
    const call = mcp.request({ method: 'tools/call', params: { name: 'refund-reconciler', arguments: { date: sampleDay.date }, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
    await expect(call).rejects.toThrow("MCP error -32602: arguments of refund-reconciler: input: the run's record would hold 420000 bytes");
    await mcp.close();
    await refusing.close();
  });

  it('kills the run of a call the client cancels (notifications/cancelled) while the run starts: no task is returned, and no run goes on unseen', async () => {
    // The runs port's start holds until the client's cancellation has reached the server.
    let startedId: string | undefined;
    let cancelArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (cancelArrived = resolve));
    const holding = await serveMcpHttp({
      credential,
      serverForSession: () =>
        savepointMcpServer({
          runs: { ...runsOf(client), start: async (request) => ((startedId = request.runId), await arrived, runsOf(client).start(request)) },
          agents: [refundReconciler],
          pollIntervalMs: 5,
          pause: () => nextTick(),
        }),
    });
    const transport = new StreamableHTTPClientTransport(new URL(holding.url), { requestInit: { headers: { authorization: `Bearer ${credential}` } } });
    // The cancellation's POST is answered once the server has taken it.
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      await send(message, options);
      if ('method' in message && message.method === 'notifications/cancelled') cancelArrived();
    };
    const mcp = new Client({ name: 'savepoint-test', version: '1.0.0' });
    await mcp.connect(transport);
    const stop = new AbortController();
    const call = mcp.request({ method: 'tools/call', params: { name: 'refund-reconciler', arguments: { date: sampleDay.date }, task: { ttl: 60_000 } } }, CreateTaskResultSchema, { signal: stop.signal });
    while (startedId === undefined) await nextTick();
    stop.abort('the user stopped the call');
    await expect(call).rejects.toThrow('the user stopped the call');
    expect(await client.wait(startedId, { untilInput: true })).toMatchObject({
      lifecycle: 'cancelled',
      report: { status: 'killed', killed: { by: 'mcp-client', reason: 'its tools/call was cancelled by the MCP client before the task was returned' } },
    });
    await mcp.close();
    await holding.close();
  });

  it('withdraws a form nobody answers once its approval is decided elsewhere: the task ends with its run', async () => {
    let withdrawn = 0;
    // The person never answers the form (it waits on their screen until it is taken back).
    const mcp = await mcpClient((_request, extra) => new Promise((_resolve, reject) => extra.signal.addEventListener('abort', () => (withdrawn++, reject(extra.signal.reason)))));
    const taskId = await startTask(mcp, { date: sampleDay.date });
    const result = mcp.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    // Each approval decided by another approver (the approval page, `savepoint approve`).
    for (let view = await client.wait(taskId, { untilInput: true }); view.lifecycle === 'input_required'; view = await client.wait(taskId, { untilInput: true })) {
      for (const approval of view.approvals) expect((await client.decide(approval.approvalId, 'approve', { reason: 'decided on the approval page' })).ok).toBe(true);
    }
    expect(await result).toMatchObject({ isError: false, structuredContent: { runId: taskId, status: 'succeeded' } });
    expect((await mcp.experimental.tasks.getTask(taskId)).status).toBe('completed');
    await mcp.close();
    expect(withdrawn).toBeGreaterThan(0);
  }, 30_000);

  it('keeps a cancelled task cancelled when its run finishes the step it was in and succeeds', async () => {
    // The run's last write (its end) is held until the test has cancelled the task.
    let reachedEnd!: () => void;
    let release!: () => void;
    const atEnd = new Promise<void>((resolve) => (reachedEnd = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    const holdEnd = (ledger: Ledger): Ledger =>
      new Proxy(ledger, {
        get: (target, property, receiver) =>
          property === 'finishRun' ? async (...args: Parameters<Ledger['finishRun']>) => (reachedEnd(), await released, target.finishRun(...args)) : Reflect.get(target, property, receiver),
      });
    const own = await startHarness({ decorateLedger: holdEnd });
    const ownClient = createClient({ ledger: own.stack.ledger, sfn: own.stack.sfn, stateMachineArn: own.stack.stateMachineArn, decide: approvalApiDecider(own.stack.endpoints.approvals), agent: refundReconciler, pause: nextTick });
    const mcpEndpoint = await serveMcpHttp({ credential, serverForSession: () => savepointMcpServer({ runs: runsOf(ownClient), agents: [refundReconciler], pollIntervalMs: 5, pause: () => nextTick() }) });
    try {
      const mcp = new Client({ name: 'savepoint-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
      mcp.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { decision: 'approve' } }));
      await mcp.connect(new StreamableHTTPClientTransport(new URL(mcpEndpoint.url), { requestInit: { headers: { authorization: `Bearer ${credential}` } } }));
      const taskId = await startTask(mcp, { date: sampleDay.date });
      const result = mcp.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      await atEnd;
      expect((await mcp.experimental.tasks.cancelTask(taskId)).status).toBe('cancelled');
      release();
      // The run went on to its end: the kill came after its last check.
      expect(await ownClient.wait(taskId)).toMatchObject({ lifecycle: 'completed', report: { status: 'succeeded', killed: { by: 'mcp-client' } } });
      expect((await mcp.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
      expect((await result).isError).toBe(true);
      await mcp.close();
    } finally {
      release();
      await mcpEndpoint.close();
      await own.stack.close();
    }
  });

  it('refuses as invalid params the cancel of a task whose run has ended, naming its status', async () => {
    // A follower that looks at its run once an hour: the task reads working until its next look.
    const hourly = await serveMcpHttp({ credential, serverForSession: () => savepointMcpServer({ runs: runsOf(client), agents: [refundReconciler], pollIntervalMs: 3_600_000 }) });
    try {
      const mcp = new Client({ name: 'savepoint-test', version: '1.0.0' });
      await mcp.connect(new StreamableHTTPClientTransport(new URL(hourly.url), { requestInit: { headers: { authorization: `Bearer ${credential}` } } }));
      const taskId = await startTask(mcp, { date: sampleDay.date });
      for (let view = await client.wait(taskId, { untilInput: true }); view.lifecycle === 'input_required'; view = await client.wait(taskId, { untilInput: true })) {
        for (const approval of view.approvals) await client.decide(approval.approvalId, 'approve');
      }
      await expect(mcp.experimental.tasks.cancelTask(taskId)).rejects.toThrow(`MCP error -32602: Cannot cancel task ${taskId}: already in terminal status completed`);
      expect((await client.status(taskId))!.report).toMatchObject({ status: 'succeeded' });
      expect((await client.status(taskId))!.report.killed).toBeUndefined();
      await mcp.close();
    } finally {
      await hourly.close();
    }
  });

  it("keeps a session's tasks its own: another session cannot see or cancel them", async () => {
    const [first, second] = [await mcpClient(), await mcpClient()];
    const taskId = await startTask(first, { date: sampleDay.date });
    await expect(second.experimental.tasks.getTask(taskId)).rejects.toThrow(/not found/i);
    await expect(second.experimental.tasks.cancelTask(taskId)).rejects.toThrow(/not found/i);
    expect((await client.status(taskId))!.report.status).not.toBe('killed');
    await Promise.all([first.close(), second.close()]);
  });

  it.each([
    ['no credential', 401, {}],
    ['a wrong credential', 403, { authorization: 'Bearer wrong' }],
    // The MCP transport's rule (servers validate Origin against DNS rebinding), with the credential.
    ['a page of another origin', 403, { authorization: `Bearer ${credential}`, origin: 'http://evil.example' }],
  ])('answers %s with %i, and starts nothing', async (_what, status, headers) => {
    const before = (await harness.stack.ledger.listRuns(100)).length;
    const response = await fetch(endpoint.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
    });
    expect(response.status).toBe(status);
    expect(await harness.stack.ledger.listRuns(100)).toHaveLength(before);
  });
});

describe('an approval answered through MCP passes the same checks as any other', () => {
  it('under separation of duties, whoever started the task cannot approve it: the decision is refused and the approval still waits', async () => {
    const alice = 'alice@example.com';
    const aliceSso = 'arn:aws:sts::111122223333:assumed-role/AWSReservedSSO_Finance_0a1b2c3d4e5f6a7b/alice@example.com';
    const people = { approverPrincipals: { [alice]: [aliceSso] }, starterPrincipals: { [alice]: [aliceSso] } };
    const own = await startHarness({ approvals: { approvers: [alice, 'bob@example.com'], policy: { separationOfDuties: true, ...people } } });
    const refused: string[] = [];
    // The MCP caller is alice (the runs API verified her): she starts the task, and her user answers the form.
    const runs: McpRuns = {
      start: async ({ input, runId }) => {
        void own.startAs(aliceSso, { runId, input, config: { approvalTimeoutSeconds: 3600 } }).catch(() => undefined);
        return { runId };
      },
      get: (runId) => createClient({ ledger: own.stack.ledger }).status(runId),
      cancel: async () => undefined,
      decide: async (approvalId, decision, options) => {
        const answer = await own.decideAs(aliceSso, approvalId, { decision, ...options });
        if (answer.status >= 300) throw new Error(`${answer.status}: ${String(answer.body['message'])}`);
        return answer.body;
      },
    };
    const mcpEndpoint = await serveMcpHttp({ credential, serverForSession: () => savepointMcpServer({ runs, agents: [refundReconciler], pollIntervalMs: 5, pause: () => nextTick(), log: (line) => refused.push(line) }) });
    try {
      let asked = 0;
      const mcp = new Client({ name: 'savepoint-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
      mcp.setRequestHandler(ElicitRequestSchema, async () => (asked++, { action: 'accept', content: { decision: 'approve' } }));
      await mcp.connect(new StreamableHTTPClientTransport(new URL(mcpEndpoint.url), { requestInit: { headers: { authorization: `Bearer ${credential}` } } }));
      const taskId = await startTask(mcp, { date: sampleDay.date });
      const result = mcp.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).catch(() => undefined);
      while (refused.length === 0) await nextTick();
      expect(asked).toBe(1);
      expect(refused[0]).toMatch(/: the decision was refused: 403: separation of duties: alice@example.com started run mcp-\S+ and cannot decide its approvals$/);
      const run = (await own.stack.ledger.getRun(taskId))!;
      expect(run.startedBy).toBe(alice);
      expect((await createClient({ ledger: own.stack.ledger }).status(taskId))!.report.approvals).toMatchObject({ approved: 0, pending: 1 });
      expect((await mcp.experimental.tasks.getTask(taskId)).status).toBe('input_required');
      await mcp.close();
      await result;
    } finally {
      await mcpEndpoint.close();
      await own.stack.close();
    }
  });
});
