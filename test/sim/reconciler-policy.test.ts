import { describe, expect, it } from 'vitest';
import type { Order, Payment, Refund, RefundRequest, ReportSummary } from '../../agents/refund-reconciler/domain.js';
import type { Message, MessageRequest, ToolResultBlock, ToolUseBlock } from '../../lambdas/records/messages.js';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { findTool, toolSpecs } from '../../lambdas/define.js';
import { decide, type PolicyResponse } from '../../agents/refund-reconciler/sim/policy.js';

const DATE = '2026-11-28';

interface FakeDay {
  requests: RefundRequest[];
  orders: Order[];
  payments: Omit<Payment, 'refundedCents' | 'status'>[];
  /** issue_refund of these requests comes back as this error content. */
  refundErrors?: Record<string, string>;
  /** Raw result content per (tool, key argument), for garbage answers. */
  raw?: Record<string, string>;
  /** Run the calls of a turn last to first (results still answer in order): lookups then read stale payments. */
  reverse?: boolean;
}

const request = (id: string, orderId: string, paymentId: string, amountCents: number): RefundRequest => ({
  id, orderId, paymentId, amountCents, currency: 'usd', reason: `refund ${id}`, requestedAt: `${DATE}T10:00:00Z`,
});
const order = (id: string, totalCents: number): Order => ({
  id, customerId: 'cus_1', totalCents, currency: 'usd', status: 'returned', items: [{ sku: 'sku_1', quantity: 1, unitCents: totalCents }],
});
const payment = (id: string, orderId: string, amountCents: number, refunds: Refund[] = []) => ({ id, orderId, amountCents, currency: 'usd' as const, refunds });
const priorRefund = (paymentId: string, refundRequestId: string, amountCents: number): Refund => ({
  id: `re_prior_${refundRequestId}`, paymentId, amountCents, currency: 'usd', reason: 'earlier', refundRequestId, createdAt: `${DATE}T09:00:00Z`,
});

/** Plays the commerce API in-process and drives the policy until it ends the conversation. */
function play(day: FakeDay) {
  const refunds = new Map(day.payments.map((p) => [p.id, [...p.refunds]]));
  let counter = 0;
  const execute = (call: ToolUseBlock): { content: string; is_error?: boolean } => {
    const tool = findTool(refundReconciler, call.name);
    if (!tool) throw new Error(`unknown tool ${call.name}`);
    const input = tool.input.parse(call.input) as Record<string, unknown>; // the policy's arguments must be valid
    const raw = day.raw?.[`${call.name}:${Object.values(input)[0] as string}`];
    if (raw !== undefined) return { content: raw };
    switch (call.name) {
      case 'list_refund_requests':
        return { content: JSON.stringify({ refundRequests: day.requests }) };
      case 'get_order':
        return { content: JSON.stringify(day.orders.find((o) => o.id === input['orderId'])) };
      case 'get_payment': {
        const p = day.payments.find((x) => x.id === input['paymentId'])!;
        const done = refunds.get(p.id)!;
        const refundedCents = done.reduce((s, r) => s + r.amountCents, 0);
        const status = refundedCents === 0 ? 'succeeded' : refundedCents < p.amountCents ? 'partially_refunded' : 'refunded';
        return { content: JSON.stringify({ ...p, refundedCents, status, refunds: done }) };
      }
      case 'issue_refund': {
        const error = day.refundErrors?.[input['refundRequestId'] as string];
        if (error !== undefined) return { content: error, is_error: true };
        const refund: Refund = {
          id: `re_${++counter}`, paymentId: input['paymentId'] as string, amountCents: input['amountCents'] as number,
          currency: 'usd', reason: input['reason'] as string, refundRequestId: input['refundRequestId'] as string, createdAt: `${DATE}T12:00:00Z`,
        };
        refunds.get(refund.paymentId)!.push(refund);
        return { content: JSON.stringify(refund) };
      }
      case 'flag_for_review':
        return { content: JSON.stringify({ id: `rev_${++counter}`, ...input, createdAt: `${DATE}T12:00:00Z` }) };
      case 'post_report':
        return { content: JSON.stringify({ id: 'rep_1', ...input, createdAt: `${DATE}T12:00:00Z` }) };
      default:
        throw new Error(`no fake for tool ${call.name}`);
    }
  };

  const messages: Message[] = [{ role: 'user', content: `Reconcile the refund requests of ${DATE}.` }];
  const turns: string[][] = [];
  const calls: ToolUseBlock[] = [];
  const requests: MessageRequest[] = [];
  for (let turn = 1; turn <= 100; turn++) {
    const req: MessageRequest = { model: 'savepoint-sim-1', max_tokens: 4096, messages: structuredClone(messages), tools: toolSpecs(refundReconciler) };
    requests.push(req);
    const response = decide(req);
    messages.push({ role: 'assistant', content: response.content });
    const uses = response.content.filter((b): b is ToolUseBlock => b.type === 'tool_use');
    if (response.stop_reason === 'end_turn') return { turns, calls, final: response, requests, messages };
    turns.push(uses.map((u) => `${u.name}(${String(Object.values(u.input)[0])})`));
    calls.push(...uses);
    const ordered = day.reverse ? [...uses].reverse() : uses;
    const results = new Map(ordered.map((u) => [u.id, execute(u)]));
    messages.push({
      role: 'user',
      content: uses.map((u): ToolResultBlock => ({ type: 'tool_result', tool_use_id: u.id, ...results.get(u.id)! })),
    });
  }
  throw new Error('the policy did not end the conversation');
}

const fourCases: FakeDay = {
  requests: [
    request('rr_001', 'ord_1', 'pay_1', 1250), // plain refund
    request('rr_002', 'ord_2', 'pay_2', 2000), // already refunded
    request('rr_003', 'ord_3', 'pay_3', 5000), // more than the order
    request('rr_004', 'ord_4', 'pay_4', 700), // approval rejected
  ],
  orders: [order('ord_1', 1250), order('ord_2', 2000), order('ord_3', 3000), order('ord_4', 900)],
  payments: [
    payment('pay_1', 'ord_1', 1250),
    payment('pay_2', 'ord_2', 2000, [priorRefund('pay_2', 'rr_002', 2000)]),
    payment('pay_3', 'ord_3', 3000),
    payment('pay_4', 'ord_4', 900),
  ],
  refundErrors: { rr_004: '{"error":"approval_rejected","reason":"customer already got store credit"}' },
};

const cases: { name: string; day: FakeDay; turns: string[][]; summary: ReportSummary }[] = [
  {
    name: 'refund, skip, mismatch, rejected approval',
    day: fourCases,
    turns: [
      ['list_refund_requests(2026-11-28)'],
      ['get_order(ord_1)', 'get_payment(pay_1)'],
      ['issue_refund(pay_1)', 'get_order(ord_2)', 'get_payment(pay_2)'],
      ['get_order(ord_3)', 'get_payment(pay_3)'],
      ['flag_for_review(rr_003)', 'get_order(ord_4)', 'get_payment(pay_4)'],
      ['issue_refund(pay_4)'],
      ['flag_for_review(rr_004)'],
      ['post_report(2026-11-28)'],
    ],
    summary: { issued: 1, skipped: 1, flagged: 2, issuedCents: 1250 },
  },
  {
    name: 'an empty day',
    day: { requests: [], orders: [], payments: [] },
    turns: [['list_refund_requests(2026-11-28)'], ['post_report(2026-11-28)']],
    summary: { issued: 0, skipped: 0, flagged: 0, issuedCents: 0 },
  },
  {
    name: 'expired approval mid-day, a payment answer that is not JSON, a skip last',
    day: {
      requests: [request('rr_a', 'ord_a', 'pay_a', 100), request('rr_b', 'ord_b', 'pay_b', 200), request('rr_c', 'ord_c', 'pay_c', 300)],
      orders: [order('ord_a', 100), order('ord_b', 200), order('ord_c', 300)],
      payments: [payment('pay_a', 'ord_a', 100), payment('pay_b', 'ord_b', 200), payment('pay_c', 'ord_c', 300, [priorRefund('pay_c', 'rr_c', 300)])],
      refundErrors: { rr_a: '{"error":"approval_expired","reason":"no decision within 24h"}' },
      raw: { 'get_payment:pay_b': '<html>502 Bad Gateway</html>' },
    },
    turns: [
      ['list_refund_requests(2026-11-28)'],
      ['get_order(ord_a)', 'get_payment(pay_a)'],
      ['issue_refund(pay_a)', 'get_order(ord_b)', 'get_payment(pay_b)'],
      ['flag_for_review(rr_a)', 'flag_for_review(rr_b)', 'get_order(ord_c)', 'get_payment(pay_c)'],
      ['post_report(2026-11-28)'], // rr_c is a skip: no decision call, the report rides in the same turn
    ],
    summary: { issued: 0, skipped: 1, flagged: 2, issuedCents: 0 },
  },
  {
    name: 'two requests on one payment, the payment read before the first refund landed',
    day: {
      requests: [request('rr_x', 'ord_x', 'pay_x', 6000), request('rr_y', 'ord_x', 'pay_x', 6000)],
      orders: [order('ord_x', 10000)],
      payments: [payment('pay_x', 'ord_x', 10000)],
      reverse: true,
    },
    turns: [
      ['list_refund_requests(2026-11-28)'],
      ['get_order(ord_x)', 'get_payment(pay_x)'],
      ['issue_refund(pay_x)', 'get_order(ord_x)', 'get_payment(pay_x)'],
      ['flag_for_review(rr_y)'],
      ['post_report(2026-11-28)'],
    ],
    summary: { issued: 1, skipped: 0, flagged: 1, issuedCents: 6000 },
  },
];

describe('reconciler policy', () => {
  it.each(cases)('$name', ({ day, turns, summary }) => {
    const run = play(day);
    expect(run.turns).toEqual(turns);
    const report = run.calls.find((c) => c.name === 'post_report');
    expect(report?.input['summary']).toEqual(summary);
    expect(run.final.stop_reason).toBe('end_turn');
    expect(run.final.content).toEqual([{ type: 'text', text: expect.stringContaining('Report rep_1 posted') }]);
  });

  it('names the amounts and quotes the errors in its review reasons', () => {
    const run = play(fourCases);
    const reasons = run.calls.filter((c) => c.name === 'flag_for_review').map((c) => c.input['reason']);
    expect(reasons).toEqual([
      'requested $50.00 exceeds the order total $30.00 of ord_3',
      'issue_refund failed: approval_rejected: "customer already got store credit"',
    ]);
    const refund = run.calls.find((c) => c.name === 'issue_refund');
    expect(refund?.input).toEqual({ paymentId: 'pay_1', refundRequestId: 'rr_001', amountCents: 1250, reason: 'refund rr_001' });
  });

  it('numbers tool calls by turn and explains every turn in a text block', () => {
    const run = play(fourCases);
    expect(run.calls.slice(0, 4).map((c) => c.id)).toEqual(['toolu_001_0', 'toolu_002_0', 'toolu_002_1', 'toolu_003_0']);
    const assistantTurns = run.messages.filter((m) => m.role === 'assistant');
    for (const m of assistantTurns) expect(Array.isArray(m.content) && m.content[0]?.type).toBe('text');
    expect(assistantTurns[3]?.content).toContainEqual({
      type: 'text',
      text: 'Skipping rr_002: already refunded by re_prior_rr_002; looking up rr_003 (order ord_3, payment pay_3).',
    });
  });

  it('is a function of the conversation: the same request gets the same response', () => {
    const run = play(fourCases);
    for (const req of run.requests) {
      const first: PolicyResponse = decide(req);
      expect(decide(structuredClone(req))).toEqual(first);
    }
  });

  it('flags requests whose lookups come back in an unexpected shape', () => {
    const run = play({ ...fourCases, refundErrors: {}, raw: { 'get_order:ord_1': '{"id":"ord_1"}' } });
    expect(run.calls.find((c) => c.name === 'flag_for_review')?.input).toEqual({
      refundRequestId: 'rr_001',
      reason: 'get_order returned an unexpected shape (customerId: Invalid input: expected string, received undefined)',
    });
  });

  it('ends the conversation when there is no date or the list fails', () => {
    const noDate = decide({ model: 'savepoint-sim-1', max_tokens: 100, messages: [{ role: 'user', content: 'Reconcile today.' }] });
    expect(noDate.stop_reason).toBe('end_turn');
    expect(noDate.content).toEqual([{ type: 'text', text: expect.stringContaining('YYYY-MM-DD') }]);

    const listFailed = decide({
      model: 'savepoint-sim-1',
      max_tokens: 100,
      messages: [
        { role: 'user', content: [{ type: 'text', text: `Reconcile the refund requests of ${DATE}.` }] },
        { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_001_0', name: 'list_refund_requests', input: { date: DATE } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_001_0', content: '{"error":"forbidden"}', is_error: true }] },
      ],
    });
    expect(listFailed).toEqual({
      content: [{ type: 'text', text: `I cannot reconcile ${DATE}: list_refund_requests failed: forbidden.` }],
      stop_reason: 'end_turn',
    });
  });
});
