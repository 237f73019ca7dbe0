import * as z from 'zod';
import type { Message, MessageRequest, TextBlock, ToolUseBlock } from 'savepoint';
import { clip, readCalls, readResult, type RecordedCall } from 'savepoint/sim';
import { Order, Payment, Refund, RefundRequest, type ReportSummary } from '../domain.js';

type ToolName = 'list_refund_requests' | 'get_order' | 'get_payment' | 'issue_refund' | 'flag_for_review' | 'post_report';

/**
 * The simulated model: a deterministic refund reconciler. It keeps no memory — every decision is
 * recomputed from the conversation, so the same request always gets the same response and a run
 * replayed from its ledger sees the same model.
 *
 * Turn shape (pipelined, about one model turn + three tool calls per request):
 *   1. list_refund_requests
 *   2. get_order + get_payment of request 1
 *   k. decision of request k-2 (issue_refund / flag_for_review / nothing for a skip),
 *      flag_for_review of any refund that came back as an error, get_order + get_payment of request k-1
 *   … post_report once every request is decided, then a final end_turn.
 *
 * Tool results are read as the JSON the tools return. Anything unexpected (is_error, not JSON, the
 * wrong shape, a missing result) gets the request flagged for review — never a crash, and a refund
 * that errored is never retried.
 */

export interface PolicyResponse {
  content: (TextBlock | ToolUseBlock)[];
  stop_reason: 'tool_use' | 'end_turn';
}

interface Action {
  name: ToolName;
  input: Record<string, unknown>;
}

type Outcome =
  | { kind: 'unseen'; note: string }
  | { kind: 'act'; action: Action; note: string }
  | { kind: 'skipped'; note: string; refundId: string }
  | { kind: 'issued'; cents: number; note: string }
  | { kind: 'flagged'; note: string };

const DATE = /\b\d{4}-\d{2}-\d{2}\b/;
const REASON_MAX = 500;
const REPORT_TEXT_MAX = 4000;
const RefundRequestList = z.object({ refundRequests: z.array(RefundRequest) });
const Reviewed = z.object({ id: z.string() });
const Posted = z.object({ id: z.string() });

export function decide(request: MessageRequest): PolicyResponse {
  const turn = request.messages.filter((m) => m.role === 'assistant').length + 1;
  const date = findDate(request.messages);
  if (date === undefined) {
    return finish('I cannot reconcile without a run date: the first user message should name a date as YYYY-MM-DD.');
  }

  const calls = readCalls(request.messages);
  const listCall = calls.find((c) => c.name === 'list_refund_requests');
  if (listCall === undefined) {
    return act(turn, [`Listing the refund requests of ${date}`], [{ name: 'list_refund_requests', input: { date } }]);
  }
  const listed = readResult(listCall, RefundRequestList);
  if (!listed.ok) return finish(`I cannot reconcile ${date}: ${listed.problem}.`);

  // A request listed twice is one request: deciding it twice could pay it twice.
  const requests = listed.value.refundRequests.filter((r, i, all) => all.findIndex((o) => o.id === r.id) === i);
  // The policy looks requests up one at a time and in order, so the i-th lookup belongs to the i-th
  // request even when two requests share an order or a payment.
  const orderCalls = calls.filter((c) => c.name === 'get_order');
  const paymentCalls = calls.filter((c) => c.name === 'get_payment');
  const issuedInRun = calls
    .filter((c) => c.name === 'issue_refund')
    .map((c) => readResult(c, Refund))
    .flatMap((r) => (r.ok ? [r.value] : []));
  const lastTurnIds = new Set(lastAssistantCalls(request.messages));

  const notes: string[] = [];
  const actions: Action[] = [];
  const outcomes = requests.map((r, i) => {
    const outcome = outcomeOf(r, orderCalls[i], paymentCalls[i], calls, issuedInRun);
    if (outcome.kind === 'act') {
      actions.push(outcome.action);
      notes.push(outcome.note);
    } else if (outcome.kind === 'skipped' && lastTurnIds.has(paymentCalls[i]?.id ?? '')) {
      notes.push(`skipping ${r.id}: already refunded by ${outcome.refundId}`);
    }
    return outcome;
  });

  const next = requests[orderCalls.length];
  if (next !== undefined) {
    actions.push({ name: 'get_order', input: { orderId: next.orderId } }, { name: 'get_payment', input: { paymentId: next.paymentId } });
    notes.push(`looking up ${next.id} (order ${next.orderId}, payment ${next.paymentId})`);
  }
  if (actions.length > 0) return act(turn, notes, actions);

  // Every request is decided and its decision has come back.
  const summary = summarize(outcomes);
  const reportCall = calls.find((c) => c.name === 'post_report');
  if (reportCall === undefined) {
    const lines = requests.map((r, i) => `${r.id}: ${outcomes[i]?.note ?? ''}`);
    const text = clip([`Refund reconciliation of ${date}: ${headline(summary)}.`, ...lines].join('\n'), REPORT_TEXT_MAX);
    return act(turn, [...notes, `posting the report of ${date}`], [{ name: 'post_report', input: { date, summary, text } }]);
  }
  const posted = readResult(reportCall, Posted);
  const tail = posted.ok ? `Report ${posted.value.id} posted.` : `The report could not be posted: ${posted.problem}.`;
  return finish(`Reconciled ${date}: ${headline(summary)}. ${tail}`);
}

/** Where one request stands, and the tool call it needs next if any. */
function outcomeOf(
  r: RefundRequest,
  orderCall: RecordedCall | undefined,
  paymentCall: RecordedCall | undefined,
  calls: RecordedCall[],
  issuedInRun: Refund[],
): Outcome {
  const flag = (reason: string): Outcome => {
    const clipped = clip(reason, REASON_MAX);
    return {
      kind: 'act',
      action: { name: 'flag_for_review', input: { refundRequestId: r.id, reason: clipped } },
      note: `flagging ${r.id} for review: ${clipped}`,
    };
  };

  const flagCall = calls.find((c) => c.name === 'flag_for_review' && c.input['refundRequestId'] === r.id);
  if (flagCall !== undefined) {
    const reviewed = readResult(flagCall, Reviewed);
    const reason = typeof flagCall.input['reason'] === 'string' ? flagCall.input['reason'] : '';
    const note = reviewed.ok ? `flagged for review (${reason})` : `flagged for review, but ${reviewed.problem}`;
    return { kind: 'flagged', note };
  }
  const refundCall = calls.find((c) => c.name === 'issue_refund' && c.input['refundRequestId'] === r.id);
  if (refundCall !== undefined) {
    const refunded = readResult(refundCall, Refund);
    if (!refunded.ok) return flag(refunded.problem);
    return { kind: 'issued', cents: refunded.value.amountCents, note: `refunded ${usd(refunded.value.amountCents)} (${refunded.value.id})` };
  }
  if (orderCall === undefined || paymentCall === undefined) return { kind: 'unseen', note: 'not looked up yet' };

  const order = readResult(orderCall, Order);
  if (!order.ok) return flag(order.problem);
  const payment = readResult(paymentCall, Payment);
  if (!payment.ok) return flag(payment.problem);
  if (order.value.id !== r.orderId) return flag(`get_order returned order ${order.value.id}, expected ${r.orderId}`);
  if (payment.value.id !== r.paymentId) return flag(`get_payment returned payment ${payment.value.id}, expected ${r.paymentId}`);

  const prior = payment.value.refunds.find((f) => f.refundRequestId === r.id);
  if (prior !== undefined) return { kind: 'skipped', note: `skipped, already refunded by ${prior.id}`, refundId: prior.id };

  // The payment may have been read before this run refunded an earlier request on it.
  const known = new Set(payment.value.refunds.map((f) => f.id));
  const unseenRefunds = issuedInRun.filter((f) => f.paymentId === r.paymentId && !known.has(f.id));
  const remaining = payment.value.amountCents - payment.value.refundedCents - unseenRefunds.reduce((s, f) => s + f.amountCents, 0);
  if (r.amountCents > order.value.totalCents) {
    return flag(`requested ${usd(r.amountCents)} exceeds the order total ${usd(order.value.totalCents)} of ${r.orderId}`);
  }
  if (r.amountCents > remaining) {
    return flag(`requested ${usd(r.amountCents)} exceeds the refundable remainder ${usd(Math.max(remaining, 0))} of payment ${r.paymentId}`);
  }
  if (r.amountCents === 0) return flag('requested amount is zero');
  return {
    kind: 'act',
    action: {
      name: 'issue_refund',
      input: { paymentId: r.paymentId, refundRequestId: r.id, amountCents: r.amountCents, reason: clip(r.reason || 'customer refund request', REASON_MAX) },
    },
    note: `refunding ${r.id} (${usd(r.amountCents)})`,
  };
}

function summarize(outcomes: Outcome[]): ReportSummary {
  const summary: ReportSummary = { issued: 0, skipped: 0, flagged: 0, issuedCents: 0 };
  for (const o of outcomes) {
    if (o.kind === 'issued') {
      summary.issued += 1;
      summary.issuedCents += o.cents;
    } else if (o.kind === 'skipped') summary.skipped += 1;
    else if (o.kind === 'flagged') summary.flagged += 1;
  }
  return summary;
}

function lastAssistantCalls(messages: Message[]): string[] {
  const last = [...messages].reverse().find((m) => m.role === 'assistant');
  if (last === undefined || typeof last.content === 'string') return [];
  return last.content.flatMap((b) => (b.type === 'tool_use' ? [b.id] : []));
}

function findDate(messages: Message[]): string | undefined {
  const first = messages.find((m) => m.role === 'user');
  if (first === undefined) return undefined;
  const text =
    typeof first.content === 'string' ? first.content : first.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
  return DATE.exec(text)?.[0];
}

function act(turn: number, notes: string[], actions: Action[]): PolicyResponse {
  const prefix = `toolu_${String(turn).padStart(3, '0')}_`;
  return {
    content: [
      { type: 'text', text: sentence(notes) },
      ...actions.map((a, i): ToolUseBlock => ({ type: 'tool_use', id: `${prefix}${i}`, name: a.name, input: a.input })),
    ],
    stop_reason: 'tool_use',
  };
}

function finish(text: string): PolicyResponse {
  return { content: [{ type: 'text', text }], stop_reason: 'end_turn' };
}

function headline(s: ReportSummary): string {
  return `${s.issued} refunded (${usd(s.issuedCents)}), ${s.skipped} skipped as already refunded, ${s.flagged} flagged for review`;
}

function sentence(notes: string[]): string {
  const text = notes.join('; ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

function usd(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

