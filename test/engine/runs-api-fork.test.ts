import { afterEach, describe, expect, it } from 'vitest';
import { apiGatewayEvent } from '../../local/services/approval-api.js';
import { lambdaContext } from '../../local/services/lambda-context.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { expiringApprovals } from '../support/manual-clock.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';
import { identityPolicies } from '../support/role-policies.js';
import { waitFor } from '../support/agent-harness.js';

/**
 * `POST /runs` for a fork: a fork of a run the ledger does not hold is refused at once (404,
 * naming the run), a fork under its parent's own id is bad input (400), and one under another run's
 * id a conflict (409, with that run), as is a fork of a parent still running (409, with the parent:
 * its writes after the fork read them would be sent again) — not a 202 and then a failed execution. The runs API reads the parent with its own role's grant (`dynamodb:GetItem`
 * on the ledger): the twin refuses the read when the template takes the grant away.
 */
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harness(template?: CfnTemplateJson): Promise<Harness> {
  const started = await startHarness({ recovery: false, ...expiringApprovals(), ...(template && { template }) });
  cleanups.push(() => started.stack.close());
  return started;
}

const post = (h: Harness, body: Record<string, unknown>) =>
  h.stack.runsApi(apiGatewayEvent({ method: 'POST', route: 'runs', body: JSON.stringify(body), principal: 'alice@example.com' }), lambdaContext('RunsApi', 20_000));

const started = (h: Harness, runId: string) => h.stack.engine.listExecutions().executions.some((execution) => execution.name?.startsWith(runId));

type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };

/** The template with the runs API's ledger statements (the table's, the pending-approvals index's and the runs-by-agent index's) taken out. */
async function withoutRunsApiLedgerGrant(): Promise<CfnTemplateJson> {
  const template = structuredClone(await cachedTemplate('refund-reconciler')) as Template;
  let removed = 0;
  for (const { id, document: policyDocument } of identityPolicies(template.Resources as never)) {
    if (!id.startsWith('ControlPlaneStackApiRunsApiFunctionServiceRole')) continue;
    const document = policyDocument as { Statement: { Action: string | string[] }[] };
    const kept = document.Statement.filter((statement) => ![statement.Action].flat().some((action) => action.startsWith('dynamodb:')));
    removed += document.Statement.length - kept.length;
    document.Statement = kept;
  }
  expect(removed).toBe(4);
  return template as CfnTemplateJson;
}

describe('the runs API and a fork', () => {
  it('answers 404 naming the parent for a fork of a run that does not exist, and starts nothing', async () => {
    const h = await harness();
    const answer = await post(h, { runId: 'orphan-fork', input: { date: sampleDay.date }, fork: { from: 'never-ran', at: 1 } });
    expect(answer.statusCode).toBe(404);
    expect(JSON.parse(answer.body)).toEqual({ message: 'fork.from: no run never-ran in the ledger' });
    expect(await h.stack.ledger.getRun('orphan-fork')).toBeUndefined();
    expect(started(h, 'orphan-fork')).toBe(false);
  });

  it("answers 400 for a fork under its parent's own run id, and starts nothing", async () => {
    const h = await harness();
    await h.run({ runId: 'fork-parent', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 1 } });
    const before = await h.stack.ledger.getRun('fork-parent');
    const executions = h.stack.engine.listExecutions().executions.length;
    const answer = await post(h, { runId: 'fork-parent', input: { date: sampleDay.date }, fork: { from: 'fork-parent', at: 1 } });
    expect(answer.statusCode).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ message: expect.stringMatching(/^runId: a fork needs a run id of its own/) });
    expect(h.stack.engine.listExecutions().executions.length).toBe(executions);
    expect(await h.stack.ledger.getRun('fork-parent')).toEqual(before);
  });

  it('answers 409 with the run for a fork under a run id the ledger holds, and starts nothing (StartRun would refuse it)', async () => {
    const h = await harness();
    await h.run({ runId: 'taken-parent', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 1 } });
    await h.run({ runId: 'taken-id', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 1 } });
    const before = await h.stack.ledger.getRun('taken-id');
    const executions = h.stack.engine.listExecutions().executions.length;
    const answer = await post(h, { runId: 'taken-id', input: { date: sampleDay.date }, fork: { from: 'taken-parent', at: 1, effects: 'dry' } });
    expect(answer.statusCode).toBe(409);
    expect(JSON.parse(answer.body)).toMatchObject({ message: 'runId: run taken-id exists already and is not this fork: name a new run id', run: { runId: 'taken-id' } });
    expect(h.stack.engine.listExecutions().executions.length).toBe(executions);
    expect(await h.stack.ledger.getRun('taken-id')).toEqual(before);
  });

  it('answers 409 with the parent for a fork of a run still running (waiting for a person), and starts nothing', async () => {
    const h = await harness();
    const finished = h.startAs('alice@example.com', { runId: 'busy-parent', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
    await waitFor(() => h.requested[0]);
    const executions = h.stack.engine.listExecutions().executions.length;
    const answer = await post(h, { runId: 'busy-fork', input: { date: sampleDay.date }, fork: { from: 'busy-parent', at: 1, effects: 'dry' } });
    expect(answer.statusCode).toBe(409);
    expect(JSON.parse(answer.body)).toMatchObject({ message: 'fork.from: run busy-parent is still running; fork a run that has finished or stopped (cancel or kill it first to fork it now)', run: { runId: 'busy-parent', lifecycle: 'input_required' } });
    expect(h.stack.engine.listExecutions().executions.length).toBe(executions);
    expect(await h.stack.ledger.getRun('busy-fork')).toBeUndefined();
    // The parent still waits when the stack closes (afterEach).
    void finished.catch(() => undefined);
  });

  it('starts a fork of a run that exists (202), and answers the same fork asked for again with it, starting nothing', async () => {
    const h = await harness();
    await h.run({ runId: 'real-parent', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 1 } });
    const request = { runId: 'real-fork', input: { date: sampleDay.date }, fork: { from: 'real-parent', at: 1, effects: 'dry' } };
    const answer = await post(h, request);
    expect(answer.statusCode).toBe(202);
    expect(started(h, 'real-fork')).toBe(true);
    await h.stack.engine.waitForExecution(JSON.parse(answer.body).executionArn);
    const executions = h.stack.engine.listExecutions().executions.length;
    const again = await post(h, request);
    expect(again.statusCode).toBe(202);
    expect(JSON.parse(again.body)).toMatchObject({ runId: 'real-fork', created: false, executionArn: JSON.parse(answer.body).executionArn });
    // The same run id with other effects is another fork: refused.
    expect((await post(h, { ...request, fork: { ...request.fork, effects: 'reuse' } })).statusCode).toBe(409);
    expect(h.stack.engine.listExecutions().executions.length).toBe(executions);
  });

  it("needs its role's ledger grant to read the parent: without it the twin refuses the read (AccessDenied, a 500) and nothing starts", async () => {
    const h = await harness(await withoutRunsApiLedgerGrant());
    const answer = await post(h, { runId: 'ungranted-fork', input: { date: sampleDay.date }, fork: { from: 'any-parent', at: 1 } });
    expect(answer.statusCode).toBe(500);
    expect(started(h, 'ungranted-fork')).toBe(false);
    expect(h.stack.engine.iamDecisions()!.denied).toBeGreaterThanOrEqual(1);
  });
});
