/**
 * Issue 34, "a shared control plane per stack": one API serves every agent of a stack. Two agents
 * of one deployed template (the refund reconciler as `agent-0` and `agent-1`, bench/deploy.ts
 * synthesizeFleet), each on the twin's engine with its own state machine, over one ledger, served
 * through the stack's one runs API and one approval API — the handlers the stack's functions run on
 * AWS (lambdas/runs/stack-routes.ts, adapters/approval-http.ts `createStackApprovalApi`), given
 * each agent's deps as the twin wires them. A start is checked by the agent it names and goes to
 * that agent's state machine; nothing starts for a refused one; a run and an approval are served
 * by their own agent.
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { synthesizeFleet } from '../../bench/deploy.js';
import { stackApprovalApiHandler } from '../../lambdas/adapters/approval-http.js';
import { runsRoutesHandler } from '../../lambdas/adapters/runs-http.js';
import { createStackRunsRoutes } from '../../lambdas/runs/stack-routes.js';
import { apiGatewayEvent, localUser } from '../../local/services/approval-api.js';
import { lambdaContext } from '../../local/services/lambda-context.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';

/** This machine's user, whom the twin's approval policy names (local/runtime/approvals.ts), as API Gateway would name the signer. */
const PERSON = localUser();
let a: Harness;
let b: Harness;
let runs: ReturnType<typeof runsRoutesHandler>;
let approvals: ReturnType<typeof stackApprovalApiHandler>;

beforeAll(async () => {
  const fleet = await synthesizeFleet(2, false);
  const agent = (index: number) => ({ ...refundReconciler, name: `agent-${index}` }) as never;
  // One template, both agents, one IAM: each function acts as its own role of the template (the twin's IAM on).
  const template = fleet.parent as CfnTemplateJson;
  a = await startHarness({ recovery: false, day: sampleDay, template, agent: agent(0) });
  b = await startHarness({ recovery: false, day: sampleDay, template, agent: agent(1), sharedLedger: a.stack.storage, sharedIam: a.stack.iam! });
  runs = runsRoutesHandler(createStackRunsRoutes(new Map([['agent-0', a.stack.served.runs], ['agent-1', b.stack.served.runs]]), a.stack.served.runs.ledger));
  approvals = stackApprovalApiHandler(new Map([['agent-0', a.stack.served.approvals], ['agent-1', b.stack.served.approvals]]), a.stack.served.approvals.ledger);
}, 120_000);
afterAll(async () => {
  await b?.stack.close();
  await a?.stack.close();
});

const call = async (handler: typeof runs, event: Parameters<typeof apiGatewayEvent>[0]): Promise<{ status: number; body: any }> => {
  const result = (await handler(apiGatewayEvent({ principal: PERSON, ...event }), lambdaContext('Api', 20_000))) as APIGatewayProxyResult;
  return { status: result.statusCode, body: JSON.parse(result.body) };
};
const start = (body: unknown) => call(runs, { method: 'POST', route: 'runs', body: JSON.stringify(body) });

describe("a stack's one API, two agents", () => {
  it('refuses a start that names no agent, an unknown one, or an input the named agent refuses: nothing starts', async () => {
    expect(await start({ input: { date: sampleDay.date }, runId: 'nobody' })).toMatchObject({ status: 400, body: { message: 'agent: this API runs agent-0, agent-1: name one' } });
    expect(await start({ agent: 'agent-9', input: { date: sampleDay.date }, runId: 'nobody' })).toMatchObject({ status: 400, body: { message: expect.stringMatching(/^agent: no agent agent-9 here/) } });
    const refused = await start({ agent: 'agent-1', input: { date: 'yesterday' }, runId: 'refused' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/input of agent agent-1/);
    expect(await a.stack.ledger.getRun('nobody')).toBeUndefined();
    expect(await a.stack.ledger.getRun('refused')).toBeUndefined();
    expect([...a.stack.engine.listExecutions().executions, ...b.stack.engine.listExecutions().executions]).toEqual([]);
  });

  it("starts each agent's run on its own state machine, serves each run and approval by its agent, and lists them together", async () => {
    const started = [await start({ agent: 'agent-0', input: { date: sampleDay.date }, runId: 'zero' }), await start({ agent: 'agent-1', input: { date: sampleDay.date }, runId: 'one' })];
    expect(started.map(({ status }) => status)).toEqual([202, 202]);
    expect(started[0]!.body).toMatchObject({ agent: 'agent-0', executionArn: expect.stringMatching(/:execution:Fleet-agent-0:zero-/) });
    expect(started[1]!.body).toMatchObject({ agent: 'agent-1', executionArn: expect.stringMatching(/:execution:Fleet-agent-1:one-/) });
    // Each run to its end, its approvals decided through the one approval API.
    for (const runId of ['zero', 'one']) {
      for (;;) {
        const run = await call(runs, { method: 'GET', route: 'runs', approvalId: runId, body: null, query: { wait: '20' } });
        // StartRun has not recorded it yet: let the engine run (a turn of the event loop, no timer) and read it again.
        if (run.status === 404) {
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        if (run.body.lifecycle === 'completed' || run.body.lifecycle === 'failed') {
          expect(run.body).toMatchObject({ agent: runId === 'zero' ? 'agent-0' : 'agent-1', lifecycle: 'completed' });
          break;
        }
        for (const approval of run.body.approvals as { approvalId: string; agent: string }[]) {
          expect(approval.agent).toBe(runId === 'zero' ? 'agent-0' : 'agent-1');
          const decided = await call(approvals, { method: 'POST', route: 'approvals', approvalId: approval.approvalId, body: JSON.stringify({ decision: 'approve' }) });
          expect(decided.status, JSON.stringify(decided.body)).toBe(200);
        }
      }
    }
    const listed = await call(runs, { method: 'GET', route: 'runs', body: null });
    expect(listed.body.runs.map((run: { runId: string; agent: string }) => `${run.agent}:${run.runId}`).sort()).toEqual(['agent-0:zero', 'agent-1:one']);
    expect((await call(runs, { method: 'GET', route: 'runs', body: null, query: { agent: 'agent-1' } })).body.runs.map((run: { runId: string }) => run.runId)).toEqual(['one']);
    // A run id is one run of one agent: another agent's start of it is refused.
    expect(await start({ agent: 'agent-0', input: { date: sampleDay.date }, runId: 'one' })).toMatchObject({ status: 400, body: { message: 'runId: run one is a run of agent agent-1, not agent-0' } });
    expect(a.stack.engine.listExecutions().executions).toHaveLength(1);
    expect(b.stack.engine.listExecutions().executions).toHaveLength(1);
  }, 120_000);
});
