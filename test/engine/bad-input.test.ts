import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { causeMessage } from '../../lambdas/shared/errors.js';
import { sampleDay, scheduledEvent, startHarness, type Harness } from '../support/refund-harness.js';
import { postDecision, waitFor } from '../support/agent-harness.js';

/**
 * A model that answers in the right wire format but with what a buggy model would say: the first
 * turn lists the day, the second refunds with an amount that is not a number.
 */
async function misbehavingModel(secondTurn: Record<string, unknown>): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      const turn = (JSON.parse(body) as { messages: unknown[] }).messages.length;
      const content =
        turn === 1
          ? [{ type: 'tool_use', id: 'toolu_1', name: 'list_refund_requests', input: { date: sampleDay.date } }]
          : [secondTurn];
      response.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({ id: `msg_${turn}`, type: 'message', role: 'assistant', model: 'savepoint-sim-1', content, stop_reason: 'tool_use', usage: { input_tokens: 10, output_tokens: 5 } }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('bad input fails once, with the field named, and loses nothing', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(async () => harness.stack.close());

  it.each([
    ['a run date that is not a date', { input: { date: '28/11/2026' } }, /invalid input of agent refund-reconciler: date: expected a date YYYY-MM-DD/],
    ['a date that is not on the calendar', { input: { date: '2026-02-30' } }, /invalid input of agent refund-reconciler: date: 2026-02-30 is not a calendar date: February 2026 has days 01–28/],
    ['an input the agent does not know', { input: { date: sampleDay.date, merchant: 'm1' } }, /invalid input of agent refund-reconciler: Unrecognized key: "merchant"/],
    ['a run request of the old shape', { runDate: sampleDay.date }, /invalid run input: .*Unrecognized key: "runDate"/],
    ['an unknown budget', { input: { date: sampleDay.date }, config: { maxStep: 5 } }, /config: Unrecognized key: "maxStep"/],
    ['a run id that cannot name an execution', { runId: 'has spaces', input: { date: sampleDay.date } }, /runId: expected 1-80 letters/],
    ['a scheduled event with a bad time', { ...scheduledEvent, time: 'last night' }, /invalid scheduled event: time/],
  ])('rejects %s at StartRun without retrying or creating a run', async (_case, input, message) => {
    // The runs other tests of this file made, whatever ran before: this one adds none.
    const runsBefore = await harness.stack.ledger.listRuns();
    const finished = await harness.run(input);
    expect(finished.status).toBe('FAILED');
    expect(finished.error).toBe('Agent.InvalidInput');
    expect(causeMessage(finished.cause)).toMatch(message);
    expect(finished.states['StartRun']).toMatchObject({ entered: 1, invocations: 1, failures: 1 });
    expect(finished.states['BudgetCheck']).toBeUndefined();
    expect(await harness.stack.ledger.listRuns()).toEqual(runsBefore);
  });

  it('rejects a bad approval decision with 400 naming the field, and the run still completes', async () => {
    const { stack } = harness;
    const run = harness.run({ runId: 'bad-decisions', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 30 } });
    const approval = await waitFor(() => harness.approvals[0]);

    expect(await postDecision(stack, approval.approvalId, { decision: 'maybe' })).toMatchObject({ status: 400, body: { message: expect.stringMatching(/decision: Invalid option/) } });
    expect(await postDecision(stack, approval.approvalId, '{not json')).toMatchObject({ status: 400, body: { message: 'body: not valid JSON' } });
    // Approve to one reader, reject to another: a decision that says both is no decision.
    expect(await postDecision(stack, approval.approvalId, '{"decision":"approve","decision":"reject"}')).toMatchObject({ status: 400, body: { message: 'body: the key "decision" is given twice (which one counts depends on the parser): give each key once' } });
    expect(await postDecision(stack, approval.approvalId, { decision: 'approve', extra: 1 })).toMatchObject({ status: 400, body: { message: expect.stringMatching(/Unrecognized key: "extra"/) } });
    expect(await postDecision(stack, 'apv_doesnotexist000000', { decision: 'approve' })).toMatchObject({ status: 404 });
    expect(await postDecision(stack, 'not-an-id', { decision: 'approve' })).toMatchObject({ status: 400, body: { message: expect.stringMatching(/approvalId/) } });
    expect(await stack.ledger.getApproval(approval.runId, approval.turn, approval.call)).toMatchObject({ status: 'pending' });

    expect(await postDecision(stack, approval.approvalId, { decision: 'approve' })).toMatchObject({ status: 200, body: { status: 'approved' } });
    // A decided approval is decided once: deciding it again, either way, is a conflict. The first decision stands.
    expect(await postDecision(stack, approval.approvalId, { decision: 'approve' })).toMatchObject({ status: 409, body: { message: expect.stringMatching(/is already approved/) } });
    expect(await postDecision(stack, approval.approvalId, { decision: 'reject' })).toMatchObject({ status: 409 });

    const second = await waitFor(() => harness.approvals[1]);
    expect(await postDecision(stack, second.approvalId, { decision: 'approve' })).toMatchObject({ status: 200 });
    expect((await run).status).toBe('SUCCEEDED');
    expect(await stack.ledger.getApproval(approval.runId, approval.turn, approval.call)).toMatchObject({ status: 'approved' });
  });
});

describe('bad model output is answered to the model', () => {
  it('answers invalid tool arguments with an error result naming the field; a model that repeats the mistake is stopped by the loop detector, paying nothing', async () => {
    const model = await misbehavingModel({
      type: 'tool_use',
      id: 'toolu_2',
      name: 'issue_refund',
      input: { paymentId: 'pay_001', refundRequestId: 'rr_001', amountCents: 'a lot', reason: 'because' },
    });
    const harness = await startHarness({ modelUrl: model.url });
    try {
      const finished = await harness.run({ runId: 'bad-args', input: { date: sampleDay.date } });
      expect(finished.status).toBe('SUCCEEDED');
      expect(JSON.parse(finished.output!)).toMatchObject({ status: 'stopped', reason: expect.stringMatching(/^loop detected: issue_refund .* repeated 5 times/) });
      // No attempt failed: each mistake was answered.
      expect(finished.states['CallTool']!.failures).toBe(0);
      const { calls } = await harness.stack.ledger.listConversation('bad-args');
      const refunds = calls.filter((call) => call.name === 'issue_refund');
      expect(refunds).toHaveLength(5);
      for (const call of refunds) {
        expect(call).toMatchObject({ status: 'completed', outcome: 'error' });
        expect(JSON.parse(call.result!)).toMatchObject({ error: 'invalid_arguments', issues: [{ path: 'amountCents', message: 'Invalid input: expected number, received string' }] });
      }
      expect(harness.stack.world.payments.refunds()).toEqual([]);
    } finally {
      await harness.stack.close();
      model.server.close();
    }
  });

  it('answers a call to a tool that does not exist, naming the tools there are', async () => {
    const model = await misbehavingModel({ type: 'tool_use', id: 'toolu_2', name: 'wire_money', input: {} });
    const harness = await startHarness({ modelUrl: model.url });
    try {
      const finished = await harness.run({ runId: 'bad-tool', input: { date: sampleDay.date } });
      expect(JSON.parse(finished.output!)).toMatchObject({ status: 'stopped', reason: expect.stringMatching(/^loop detected: wire_money/) });
      expect(finished.states['CallTool']!.failures).toBe(0);
      const { calls } = await harness.stack.ledger.listConversation('bad-tool');
      expect(JSON.parse(calls.find((call) => call.name === 'wire_money')!.result!)).toEqual({ error: 'unknown_tool', message: expect.stringMatching(/^there is no tool "wire_money"; the tools are: list_refund_requests, /) });
    } finally {
      await harness.stack.close();
      model.server.close();
    }
  });
});
