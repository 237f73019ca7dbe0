import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/experimental/tasks';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { connect } from '../../client/index.js';
import { leftBehind, providerJournal, savepoint, SAVEPOINT_BIN, smallDay, workspace } from '../support/cli-process.js';
import { startServe } from '../support/serve-process.js';

/**
 * `savepoint mcp` over stdio as an MCP host runs it (a child process the official SDK's
 * StdioClientTransport spawns), in front of a `savepoint serve` process: the runs are serve's.
 */
const bin = SAVEPOINT_BIN;
/** Six refund requests, two of them large (the two approvals the user answers), not the sample day's 25: the same task and the same events, for less CPU (the file: 1.3–1.6 s against 1.4–1.9 s, two sittings on 2026-12-05). */
const day = smallDay;
const { children, dirs } = leftBehind();

describe('savepoint mcp over stdio', () => {
  it('lists the agent, runs a task to its end with the approvals answered by the user, and cancels another as a recorded kill', async () => {
    const { stateDir, args } = await workspace('mcp-stdio', day);
    dirs.push(dirname(stateDir));
    const serving = await startServe(args('serve'), children);

    const mcp = new Client({ name: 'savepoint-stdio-test', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    let asked = 0;
    // Once the first task is done, a question is held, never answered: the second task, which two
    // approvals stand between and its end, cannot finish before its cancel however slow the cancel is.
    let answering = true;
    mcp.setRequestHandler(ElicitRequestSchema, async (_request, extra) => {
      if (!answering) return new Promise<never>((_resolve, reject) => extra.signal.addEventListener('abort', () => reject(extra.signal.reason)));
      asked += 1;
      return { action: 'accept', content: { decision: 'approve' } };
    });
    const transport = new StdioClientTransport({ command: process.execPath, args: [bin, '--state-dir', stateDir, 'mcp', '--agent', 'refund-reconciler'], stderr: 'pipe' });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    await mcp.connect(transport);
    expect(mcp.getServerVersion()).toMatchObject({ name: 'savepoint' });
    expect((await mcp.listTools()).tools.map((tool) => tool.name)).toEqual(['refund-reconciler']);

    const progress: { progress: number; message?: string | undefined }[] = [];
    const call = (date: string) =>
      mcp.request({ method: 'tools/call', params: { name: 'refund-reconciler', arguments: { date }, task: { ttl: 60_000 } } }, CreateTaskResultSchema, { onprogress: (note) => void progress.push(note) });
    const { task } = await call(day.date);
    const result = await mcp.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ runId: task.taskId, status: 'succeeded', summary: { issued: 4 } });
    expect(asked).toBe(2);
    // Progress from the run's event stream: one notification per event, in order, to run.finished.
    expect(progress.map((note) => note.progress)).toEqual(progress.map((_, index) => index + 1));
    expect(progress.map((note) => note.message)).toEqual(expect.arrayContaining(['run.started', 'approval.waiting issue_refund', 'tool.result issue_refund']));
    expect(progress.at(-1)?.message).toBe('run.finished');
    // Each refund once in the provider's journal.
    const refunds = providerJournal(stateDir).filter((entry) => entry.kind === 'refund').map((entry) => entry.record.refundRequestId);
    expect(new Set(refunds).size).toBe(refunds.length);

    answering = false;
    const second = await call(day.date);
    expect((await mcp.experimental.tasks.cancelTask(second.task.taskId)).status).toBe('cancelled');
    const client = await connect({ stateDir });
    expect(await client.wait(second.task.taskId)).toMatchObject({ lifecycle: 'cancelled', report: { status: 'killed', killed: { by: expect.stringMatching(/^local:/), reason: 'Client cancelled task execution.' } } });

    await mcp.close();
    expect(stderr).toBe('');

    // Without --agent, every agent serve runs is a tool; an agent serve does not run (by name, or another module's
    // path) is refused at start (exit 2), not listed as a tool whose every call serve refuses.
    const every = new Client({ name: 'savepoint-stdio-test', version: '1.0.0' });
    await every.connect(new StdioClientTransport({ command: process.execPath, args: [bin, '--state-dir', stateDir, 'mcp'], stderr: 'pipe' }));
    expect((await every.listTools()).tools.map((tool) => tool.name)).toEqual(['refund-reconciler']);
    await every.close();
    const other = new URL('../cli/fixtures/held-note.ts', import.meta.url).pathname;
    for (const agent of ['support-triage', other]) {
      const refused = await savepoint(['--state-dir', stateDir, 'mcp', '--agent', agent]);
      expect(refused, agent).toMatchObject({ code: 2, stdout: '' });
      expect(refused.stderr).toMatch(new RegExp(`^savepoint: --agent ${agent}: the engine on \\S+ \\(pid \\d+\\) runs refund-reconciler \\(\\S+agents/refund-reconciler/agent\\.ts\\), not ${agent}: its tool would start runs the engine refuses$`, 'm'));
    }
    serving.child.kill('SIGTERM');
    expect(await serving.exited).toBe(0);
  }, 180_000);

  it('without a serve on the state directory, exits 2 naming what to start', async () => {
    const { stateDir } = await workspace('mcp-none', day);
    dirs.push(dirname(stateDir));
    const answer = await savepoint(['--state-dir', stateDir, 'mcp', '--agent', 'refund-reconciler']);
    expect(answer.code).toBe(2);
    expect(answer.stderr).toMatch(/^savepoint: stateDir: no savepoint engine serves .* start one with `savepoint serve --agent <name\|path>`/m);
    expect(answer.stdout).toBe('');
  });
});

describe('savepoint mcp --http', () => {
  it("takes the credential engine.json publishes now: after serve restarts, the new one, and no longer the old", async () => {
    const { stateDir, args } = await workspace('mcp-http-restart', day);
    dirs.push(dirname(stateDir));
    const credential = () => new URL((JSON.parse(readFileSync(join(stateDir, 'engine.json'), 'utf8')) as { endpoints: { runs: string } }).endpoints.runs).pathname.split('/')[1]!;
    let serving = await startServe(args('serve'), children);
    const old = credential();
    const mcp = spawn(process.execPath, [bin, '--state-dir', stateDir, 'mcp', '--agent', 'refund-reconciler', '--http'], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(mcp);
    const url = await new Promise<string>((resolve) => {
      let stderr = '';
      mcp.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString('utf8');
        const address = /Streamable HTTP at (\S+)/.exec(stderr)?.[1];
        if (address) resolve(address);
      });
    });
    const tools = async (bearer: string) => {
      const client = new Client({ name: 'savepoint-http-test', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${bearer}` } } }));
      try {
        return (await client.listTools()).tools.map((tool) => tool.name);
      } finally {
        await client.close();
      }
    };
    expect(await tools(old)).toEqual(['refund-reconciler']);

    serving.child.kill('SIGTERM');
    expect(await serving.exited).toBe(0);
    // No serve: refused, saying so, rather than served a session whose every call fails.
    const between = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${old}`, 'content-type': 'application/json' }, body: '{}' });
    expect(between.status).toBe(503);
    expect(((await between.json()) as { error: { message: string } }).error.message).toMatch(/^stateDir: no savepoint engine serves /);

    serving = await startServe(args('serve'), children);
    const now = credential();
    expect(now).not.toBe(old);
    expect(await tools(now)).toEqual(['refund-reconciler']);
    await expect(tools(old)).rejects.toThrow(/the MCP endpoint needs the owner's credential/);

    mcp.kill('SIGTERM');
    serving.child.kill('SIGTERM');
    expect(await serving.exited).toBe(0);
  }, 120_000);
});
