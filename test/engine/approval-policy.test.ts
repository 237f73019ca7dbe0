import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../../lambdas/define.js';
import { APPROVAL_THRESHOLD_CENTS, RefundRunInput } from '../../agents/refund-reconciler/agent.js';
import refundReconciler from '../../agents/refund-reconciler/agent.dev.js';
import type { MessageRequest } from '../../lambdas/records/messages.js';
import { parseOrThrow } from '../../lambdas/shared/validation.js';
import { postDecision, startAgentHarness, waitFor, wake } from '../support/agent-harness.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * Approval policy is the agent's (its code, deployed), never the run's: a run's input cannot
 * switch approvals off, and a rule may weigh what the run already did — so a refund split into
 * parts under the threshold still waits for a person.
 */

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

describe('approval policy is not the run input’s', () => {
  it('refuses an input that sets an approval threshold, naming the field', () => {
    expect(() => parseOrThrow(RefundRunInput, { date: sampleDay.date, approvalThresholdCents: 100_000_000 }, 'input')).toThrow(/approvalThresholdCents/);
  });

  it('a run started with a threshold in its input fails at StartRun and pays nothing', async () => {
    harness = await startHarness();
    const finished = await harness.run({ runId: 'no-approvals-please', input: { date: sampleDay.date, approvalThresholdCents: 100_000_000 } });
    expect(finished.status).toBe('FAILED');
    expect(finished.error).toBe('Agent.InvalidInput');
    expect(harness.stack.world.payments.refunds()).toEqual([]);
  });
});

describe('a rule on the run’s recorded facts catches a split refund', () => {
  // $1,299.00 of rr_025 in three parts, each under the $500 threshold: $499.99 + $499.99 + $299.02.
  const request = sampleDay.refundRequests.find((candidate) => candidate.amountCents === 129_900)!;
  const parts = [49_999, 49_999, 29_902];
  const splitModel = (messages: MessageRequest) => {
    // It lists the day first: the rule pays only a request the provider listed for the payment.
    const turn = messages.messages.filter((message) => message.role === 'assistant').length - 1;
    if (turn === -1) return { content: [{ type: 'tool_use' as const, id: 'toolu_list', name: 'list_refund_requests', input: { date: sampleDay.date } }], stop_reason: 'tool_use' as const };
    const amountCents = parts[turn];
    if (amountCents === undefined) return { content: [{ type: 'text' as const, text: 'done' }], stop_reason: 'end_turn' as const };
    return {
      content: [{ type: 'tool_use' as const, id: `toolu_split_${turn + 1}`, name: 'issue_refund', input: { paymentId: request.paymentId, refundRequestId: request.id, amountCents, reason: `part ${turn + 1}` } }],
      stop_reason: 'tool_use' as const,
    };
  };

  it('pays the first part, then holds the part that takes the request past the threshold, and the next one', async () => {
    expect(parts.every((part) => part <= APPROVAL_THRESHOLD_CENTS)).toBe(true);
    harness = await startHarness({ agent: { ...refundReconciler, dev: { ...refundReconciler.dev!, policy: splitModel } } });
    const h = harness;
    const finished = h.run({ runId: 'split', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });

    const second = await waitFor(() => h.approvals[0]);
    expect(second).toMatchObject({ turn: 3, call: 1, toolName: 'issue_refund', amount: { minor: 99_998, currency: 'usd' }, summary: expect.stringContaining('$999.98 with the earlier refunds of this payment') });
    expect(h.stack.world.payments.refunds().filter((refund) => refund.refundRequestId === request.id).map((refund) => refund.amountCents)).toEqual([49_999]);
    expect((await postDecision(h.stack, second.approvalId, { decision: 'reject', reason: 'a split refund' })).status).toBe(200);

    // The rejected part paid nothing; the third part still takes the total ($499.99 + $299.02) past it.
    const third = await waitFor(() => h.approvals[1]);
    expect(third).toMatchObject({ turn: 4, call: 1, amount: { minor: 79_901 } });
    expect((await postDecision(h.stack, third.approvalId, { decision: 'reject', reason: 'still split' })).status).toBe(200);
    expect((await finished).status).toBe('SUCCEEDED');
    expect(h.stack.world.payments.refunds().filter((refund) => refund.refundRequestId === request.id).map((refund) => refund.amountCents)).toEqual([49_999]);
  });
});

describe('an instruction injected into a refund reason cannot steer the rule', () => {
  // The red team's attack: one $1,299.00 payment paid as $499.99 + $499.99 + $299.02 under three
  // other requests' ids, each part under the threshold and each id's own total under it too.
  const big = sampleDay.refundRequests.find((candidate) => candidate.amountCents === 129_900)!;
  const others = sampleDay.refundRequests.filter((candidate) => candidate.paymentId !== big.paymentId).slice(0, 3);
  const parts = [49_999, 49_999, 29_902];
  const refundsOfBig = (h: Harness) => h.stack.world.payments.refunds().filter((refund) => refund.paymentId === big.paymentId);
  /** A model that lists the day (when `list`), then asks for the three parts in one turn, following the injected instruction. */
  const injected = (list: boolean) => (messages: MessageRequest) => {
    const turn = messages.messages.filter((message) => message.role === 'assistant').length - (list ? 1 : 0);
    if (turn === -1) return { content: [{ type: 'tool_use' as const, id: 'toolu_list', name: 'list_refund_requests', input: { date: sampleDay.date } }], stop_reason: 'tool_use' as const };
    if (turn > 0) return { content: [{ type: 'text' as const, text: 'done' }], stop_reason: 'end_turn' as const };
    return {
      content: parts.map((amountCents, index) => ({
        type: 'tool_use' as const,
        id: `toolu_part_${index + 1}`,
        name: 'issue_refund',
        input: { paymentId: big.paymentId, refundRequestId: others[index]!.id, amountCents, reason: 'as the note in rr_025 instructs' },
      })),
      stop_reason: 'tool_use' as const,
    };
  };

  for (const list of [true, false]) {
    it(`pays nothing without a person: each part asks for approval, naming the request's own payment${list ? '' : ' (nothing listed: no request is known)'}`, async () => {
      harness = await startHarness({ agent: { ...refundReconciler, dev: { ...refundReconciler.dev!, policy: injected(list) } } });
      const h = harness;
      let ended: string | undefined;
      const finished = h.run({ runId: `injected-${list}`, input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
      void finished.then((done) => {
        ended = `the run ended ${done.status} with ${h.approvals.length} approval(s) asked and ${refundsOfBig(h).length} refund(s) of ${big.paymentId} paid`;
        wake();
      });
      const asked = await waitFor(() => (h.approvals.length === 3 ? h.approvals : ended));
      if (typeof asked === 'string') throw new Error(asked);
      expect(refundsOfBig(h)).toEqual([]);
      for (const [index, approval] of asked.entries()) {
        const other = others[index]!;
        expect(approval).toMatchObject({ toolName: 'issue_refund', amount: { minor: parts[index], currency: 'usd' }, details: { payment: big.paymentId, refundRequest: other.id, requestIsFor: list ? other.paymentId : 'not listed by the provider' } });
      }
      for (const approval of asked) expect((await postDecision(h.stack, approval.approvalId, { decision: 'reject', reason: 'not this payment’s request' })).status).toBe(200);
      expect((await finished).status).toBe('SUCCEEDED');
      expect(refundsOfBig(h)).toEqual([]);
    });
  }
});

describe('a rule that looks something up in the agent’s deps', () => {
  // The accounts that always need a person: the deployment's, read once when the deps are built.
  const paid: string[] = [];
  const pay = defineTool({
    name: 'pay',
    description: 'Pays an account.',
    input: z.object({ account: z.string(), cents: z.number().int().positive() }),
    effect: 'write',
    needsApproval: ({ account, cents }, _run, _facts, deps: { watched: ReadonlySet<string> }) => (deps.watched.has(account) ? { summary: `pay ${cents} to ${account}, a watched account` } : undefined),
    execute: async ({ account }) => (paid.push(account), { paid: account }),
  });
  const agent = defineAgent({
    name: 'watched-payments',
    model: 'sim:savepoint-sim-1',
    system: 'Pay the accounts.',
    input: z.object({ id: z.string() }),
    prompt: () => 'Pay acme and zeta.',
    tools: [pay],
    deps: (env) => ({ watched: new Set((env['WATCHED_ACCOUNTS'] ?? '').split(',')) }),
    dev: {
      policy: (request) => {
        const turn = request.messages.filter((message) => message.role === 'assistant').length;
        if (turn > 0) return { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' };
        const call = (id: string, account: string) => ({ type: 'tool_use' as const, id, name: 'pay', input: { account, cents: 500 } });
        return { content: [call('t1', 'acme'), call('t2', 'zeta')], stop_reason: 'tool_use' };
      },
    },
  });

  it('holds the call its deps name for a person, and lets the other through', async () => {
    const current = await startAgentHarness({ agent, agentEnv: { WATCHED_ACCOUNTS: 'acme,globex' } });
    try {
      let ended: string | undefined;
      const finished = current.run({ runId: 'watched', input: { id: 'watched' }, config: { approvalTimeoutSeconds: 3600 } });
      void finished.then((done) => (ended = `the run ended ${done.status} (${done.error ?? ''}: ${done.cause ?? ''}), no approval asked`));
      const asked = await waitFor(() => current.approvals[0] ?? ended);
      if (typeof asked === 'string') throw new Error(asked);
      expect(asked).toMatchObject({ turn: 1, call: 1, toolName: 'pay', summary: 'pay 500 to acme, a watched account (run watched)' });
      // The turn's calls run side by side: zeta is paid while acme waits for its person.
      await waitFor(() => paid.includes('zeta') || undefined);
      expect(paid).toEqual(['zeta']);
      expect((await postDecision(current.stack, asked.approvalId, { decision: 'approve', reason: 'known' })).status).toBe(200);
      expect((await finished).status).toBe('SUCCEEDED');
      // Only acme waited; zeta was paid without a person.
      expect(current.approvals).toHaveLength(1);
      expect(paid).toEqual(['zeta', 'acme']);
    } finally {
      await current.stack.close();
    }
  });
});
