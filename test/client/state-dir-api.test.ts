import { cpSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { runsClient, servedAt } from '../../client/connect.js';
import { openEveryAgent } from '../../cli/state.js';
import { loadAgent } from '../../local/runtime/agents.js';
import { localApprovalPolicy } from '../../local/runtime/approvals.js';
import { IN_PROCESS_ORIGIN, stateDirApi } from '../../local/services/state-dir-api.js';
import { localApprovalKeys } from '../../local/state/approval-keys.js';
import { leftBehind, workspaceWithRun } from '../support/cli-process.js';
import { startServe } from '../support/serve-process.js';

/**
 * The runs API answered in process over a state directory no engine serves (what `savepoint
 * status`, `runs`, `approvals`, `approve` and `reject` reach then: cli/target.ts withRuns) answers
 * as `savepoint serve`'s socket does over the same records: the same status codes and bodies.
 */
const { children, dirs } = leftBehind();
const day = makeSampleDay(3, { plain: 1, already_refunded: 0, mismatch: 1, large: 0 });

describe('a state directory no engine serves, asked in process', () => {
  it("answers each request as serve's socket answers it over a copy of the same directory", async () => {
    const { stateDir } = await workspaceWithRun('state-dir-api', day);
    dirs.push(dirname(stateDir));
    const copy = join(dirname(stateDir), 'served');
    cpSync(stateDir, copy, { recursive: true });
    await startServe(['--state-dir', copy, 'serve', '--agent', 'refund-reconciler', '--template', join(dirname(stateDir), 'template.json')], children);

    const inProcess = stateDirApi({
      open: (access) => openEveryAgent(stateDir, 'status', access),
      agentOf: async (name) => (await loadAgent(name)).agent,
      decisionMac: localApprovalKeys(stateDir).decisions,
      policy: localApprovalPolicy({}),
      engineHint: 'start one with `savepoint serve`',
    });
    const ask = async (base: string, send: typeof fetch, method: string, path: string, body?: string) => {
      const answer = await send(`${base}${path}`, { method, ...(body !== undefined && { headers: { 'content-type': 'application/json' }, body }) });
      return { status: answer.status, body: JSON.parse(await answer.text()) as unknown };
    };
    const { runs } = await runsClient({ base: `${IN_PROCESS_ORIGIN}/v1`, fetch: inProcess }).list();
    const runId = runs[0]!.runId;
    const requests: [method: string, path: string, body?: string][] = [
      ['GET', `/runs/${runId}`],
      ['GET', '/runs/no-such-run'],
      ['GET', `/runs/${runId}?color=red`],
      ['GET', '/runs'],
      ['GET', '/runs?status=succeeded&limit=1'],
      ['GET', '/runs?cursor=not-a-cursor'],
      ['GET', '/runs?limit=0'],
      ['GET', '/approvals'],
      ['POST', `/runs/${runId}/cancel`, '{}'],
      ['POST', '/runs/no-such-run/cancel', '{}'],
      ['POST', `/runs/${runId}/cancel`, '{"reason":1}'],
      ['POST', '/approvals/apv_0000000000000000', '{"decision":"approve"}'],
      ['POST', '/approvals/not-an-id', '{"decision":"approve"}'],
      ['POST', '/approvals/apv_0000000000000000', '{"decision":"maybe"}'],
      ['POST', '/approvals/apv_0000000000000000', 'not json'],
      ['POST', '/approvals/apv_0000000000000000', JSON.stringify({ decision: 'approve', reason: 'x'.repeat(70 * 1024) })],
      ['GET', '/nothing-here'],
      ['PUT', '/runs', '{}'],
      ['POST', '/approvals', '{"decision":"approve"}'],
    ];
    const socket = servedAt(copy).base;
    const statuses: number[] = [];
    for (const [method, path, body] of requests) {
      const served = await ask(socket, fetch, method, path, body);
      expect(await ask(`${IN_PROCESS_ORIGIN}/v1`, inProcess, method, path, body), `${method} ${path}`).toEqual(served);
      statuses.push(served.status);
    }
    // The table covers the answers, refusals included (so equal bodies are not all one kind of answer).
    expect(statuses).toEqual([200, 404, 400, 200, 200, 400, 400, 200, 409, 404, 400, 404, 400, 400, 400, 413, 404, 405, 405]);
    // What only an engine can do is refused, naming what to start.
    expect(await ask(`${IN_PROCESS_ORIGIN}/v1`, inProcess, 'POST', '/runs', JSON.stringify({ input: { date: day.date } }))).toEqual({
      status: 503,
      body: { message: 'start: no engine runs here to start a run: start one with `savepoint serve`' },
    });
  }, 240_000);
});
