import { defineAgent, defineTool, parseOrThrow, type ApprovalRequest, type FactCall, type ToolTrace } from 'savepoint';
import * as z from 'zod';
import { Cents, dollars, IsoDate, ReportSummary, type CommerceApi } from './domain.js';
import { HttpCommerceApi } from './payments-client.js';

/**
 * The refund reconciler: savepoint's first example agent. Every night it reconciles the refund
 * requests customers filed the day before: looks up each order and payment, then refunds, skips or
 * flags the request for a person; refunds above a threshold wait for approval. It uses only the
 * public API (`savepoint`); the harness imports none of it. Its simulated world and scripted model
 * are in agent.dev.ts, which no Lambda bundle reaches.
 */

const Id = z.string().min(1).max(64);

export const RefundRunInput = z
  .object({
    /** The day whose refund requests are reconciled. */
    date: IsoDate,
  })
  .strict();

/**
 * Refunds of one payment above this total wait for a person. Policy, so part of the agent's code
 * (fingerprinted, deployed), never of its input: whoever starts a run writes the input.
 */
export const APPROVAL_THRESHOLD_CENTS = 50_000;

/** The most one run refunds in all before every further refund waits for a person: $10,000. */
export const MAX_UNAPPROVED_PER_RUN_CENTS = 1_000_000;
export type RefundRunInput = z.output<typeof RefundRunInput>;

interface Deps {
  commerce: CommerceApi;
}

const Environment = z.object({ PAYMENTS_API_URL: z.url() });

const listRefundRequests = defineTool({
  name: 'list_refund_requests',
  description: 'Lists the refund requests customers filed on a given day.',
  input: z.object({ date: IsoDate }).strict(),
  effect: 'read',
  execute: async (args, { deps, signal }) => ({ refundRequests: await (deps as Deps).commerce.listRefundRequests(args.date, signal) }),
});

const getOrder = defineTool({
  name: 'get_order',
  description: 'Fetches an order: its total, status and items.',
  input: z.object({ orderId: Id }).strict(),
  effect: 'read',
  execute: (args, { deps, signal }) => (deps as Deps).commerce.getOrder(args.orderId, signal),
});

const getPayment = defineTool({
  name: 'get_payment',
  description: 'Fetches a payment: the captured amount, what was refunded already and the refunds.',
  input: z.object({ paymentId: Id }).strict(),
  effect: 'read',
  execute: (args, { deps, signal }) => (deps as Deps).commerce.getPayment(args.paymentId, signal),
});

const issueRefund = defineTool({
  name: 'issue_refund',
  description: 'Refunds an amount of a payment for a refund request. Pays money: call once per request.',
  input: z
    .object({ paymentId: Id, refundRequestId: Id, amountCents: Cents.positive(), reason: z.string().min(1).max(500) })
    .strict(),
  effect: 'write',
  // The provider deduplicates on the Idempotency-Key: a re-sent refund returns the first one.
  idempotencyKeys: true,
  // One refund per refund request, whichever run (or call) asks: two runs of the same day pay once.
  idempotencyKey: (args) => args.refundRequestId,
  // Checked against what the run read from the provider, never only against what the model wrote
  // (a customer's refund reason can carry instructions): a refund's request must be one the
  // provider listed, for the payment it pays — else a person decides.
  // Then the refunds of the payment in this run add up (in its own words for the person; the
  // harness's `aggregate` below holds the same line and reserves it across runs): a refund split
  // into parts under the threshold ($499.99 + $499.99 + $299.02), under its own request id or
  // others', waits for a person from the part that crosses it. Parts asked for in the same turn
  // (no outcome yet: they run alongside) count as paid.
  needsApproval: (args, _run, facts): ApprovalRequest | undefined => {
    const listed = listedRequests(facts.calls).get(args.refundRequestId);
    if (listed?.paymentId !== args.paymentId) {
      return {
        summary: `issue_refund ${dollars(args.amountCents)} of ${args.paymentId} for ${args.refundRequestId}, a request ${listed ? `for ${listed.paymentId}` : 'the provider did not list'}`,
        amount: { minor: args.amountCents, currency: 'usd' },
        details: { payment: args.paymentId, refundRequest: args.refundRequestId, requestIsFor: listed?.paymentId ?? 'not listed by the provider' },
      };
    }
    const earlier = facts.calls
      .filter((call) => call.name === 'issue_refund' && (call.outcome ?? 'ok') === 'ok' && call.args['paymentId'] === args.paymentId)
      .reduce((sum, call) => sum + Number(call.args['amountCents']), 0);
    const total = earlier + args.amountCents;
    if (total <= APPROVAL_THRESHOLD_CENTS) return undefined;
    return {
      summary: `issue_refund ${dollars(args.amountCents)} for ${args.refundRequestId}${earlier > 0 ? ` (${dollars(total)} with the earlier refunds of this payment)` : ''}`,
      amount: { minor: total, currency: 'usd' },
      details: { payment: args.paymentId, refundRequest: args.refundRequestId, requested: dollars(listed.amountCents), ...(earlier > 0 && { refundedBefore: dollars(earlier) }) },
    };
  },
  // The refunds of one payment add up across the agent's runs too, reserved in the ledger before
  // each is sent: two runs (or a re-run) cannot each pay a part under the threshold.
  aggregate: { key: (args) => args.paymentId, amount: (args) => args.amountCents, threshold: APPROVAL_THRESHOLD_CENTS, currency: 'usd' },
  describe: (args) => `refund ${dollars(args.amountCents)} of payment ${args.paymentId} for ${args.refundRequestId}`,
  execute: (args, { deps, idempotencyKey, signal }) => (deps as Deps).commerce.createRefund(args, idempotencyKey, signal),
});

const flagForReview = defineTool({
  name: 'flag_for_review',
  description: 'Puts a refund request in the human review queue with the reason it cannot be refunded automatically.',
  input: z.object({ refundRequestId: Id, reason: z.string().min(1).max(500) }).strict(),
  effect: 'write',
  idempotencyKeys: true,
  // One review per refund request, whichever run asks.
  idempotencyKey: (args) => args.refundRequestId,
  execute: (args, { deps, idempotencyKey, signal }) => (deps as Deps).commerce.createReview(args, idempotencyKey, signal),
});

const postReport = defineTool({
  name: 'post_report',
  description: "Posts the day's reconciliation report. Call once, at the end.",
  input: z.object({ date: IsoDate, summary: ReportSummary, text: z.string().max(4000) }).strict(),
  effect: 'write',
  idempotencyKeys: true,
  execute: (args, { deps, idempotencyKey, signal }) => (deps as Deps).commerce.postReport(args, idempotencyKey, signal),
});

export const refundReconciler = defineAgent<RefundRunInput, Deps>({
  name: 'refund-reconciler',
  model: 'sim:savepoint-sim-1',
  system: [
    'You reconcile the refund requests customers filed on one day.',
    'For each request, look up its order and payment, then decide:',
    '- a request already refunded: skip it;',
    '- a requested amount above the order total or above what is left to refund: flag it for review;',
    '- otherwise: issue the refund, once.',
    'A refund that is rejected or not approved in time is flagged for review. Never retry a refund that failed.',
    'When every request is decided, post the report of the day, then stop.',
  ].join('\n'),
  input: RefundRunInput,
  prompt: (input) => `Reconcile the refund requests of ${input.date}.`,
  tools: [listRefundRequests, getOrder, getPayment, issueRefund, flagForReview, postReport],
  // What deps reads: a DurableAgent given this agent fails at synth when its environment lacks one.
  env: Object.keys(Environment.shape),
  deps: (env, { fetch }) => {
    const { PAYMENTS_API_URL } = parseOrThrow(Environment, env, 'refund-reconciler environment');
    return { commerce: new HttpCommerceApi({ baseUrl: PAYMENTS_API_URL, fetch }) };
  },
  // One run per day, however it is started: the run id is the idempotency key of the whole run.
  runId: (input) => `refunds-${input.date}`,
  // The nightly run reconciles the day before the schedule fires.
  scheduled: (eventTime) => ({ date: new Date(eventTime.getTime() - 24 * 3600 * 1000).toISOString().slice(0, 10) }),
  report: refundSummary,
  approvals: { maxUnapprovedPerRun: MAX_UNAPPROVED_PER_RUN_CENTS },
});

export default refundReconciler;

/** What the day's run did with the refund requests, from the recorded tool calls. */
export function refundSummary(calls: readonly ToolTrace[]) {
  const ok = (name: string) => calls.filter((call) => call.name === name && call.status === 'completed' && call.outcome === 'ok');
  const issued = ok('issue_refund');
  const flagged = ok('flag_for_review');
  const escalated = calls.filter((call) => call.name === 'issue_refund' && (call.outcome === 'rejected' || call.outcome === 'expired'));
  const requests = requestIds(calls);
  const decided = new Set([...issued, ...flagged].map((call) => String(call.args['refundRequestId'])));
  // Skipped: found already refunded (its payment, looked up, holds a refund of it) — the rule's
  // skip. A request the run never decided (it stopped first) is undecided, not skipped.
  const refunded = alreadyRefunded(calls);
  const skipped = [...requests].filter((id) => !decided.has(id) && refunded.has(id)).length;
  return {
    requests: requests.size,
    issued: issued.length,
    issuedCents: issued.reduce((sum, call) => sum + Number(call.args['amountCents'] ?? 0), 0),
    skipped,
    flagged: flagged.length,
    escalated: escalated.length,
    undecided: [...requests].filter((id) => !decided.has(id) && !refunded.has(id)).length,
  };
}

/** The refund requests the provider listed to this run (its `list_refund_requests` results, as the ledger sealed them), by id. */
function listedRequests(calls: readonly FactCall[]): Map<string, { paymentId: string; amountCents: number }> {
  const listed = new Map<string, { paymentId: string; amountCents: number }>();
  for (const call of calls) {
    if (call.name !== 'list_refund_requests') continue;
    const parsed = ListedRequests.safeParse(call.result);
    for (const request of parsed.success ? parsed.data.refundRequests : []) listed.set(request.id, request);
  }
  return listed;
}

const ListedRequests = z.object({ refundRequests: z.array(z.object({ id: z.string(), paymentId: z.string(), amountCents: z.number() })) });

/** The refund request ids the run listed (from the recorded `list_refund_requests` results). */
const requestIds = (calls: readonly ToolTrace[]) => idsInResults(calls, 'list_refund_requests', (result) => result.refundRequests, 'id');

/** The refund request ids a looked-up payment was already refunded for (from the recorded `get_payment` results). */
const alreadyRefunded = (calls: readonly ToolTrace[]) => idsInResults(calls, 'get_payment', (result) => result.refunds, 'refundRequestId');

/** The ids (`key` of each item of the list `pick` finds) in the ok results of one tool. */
function idsInResults(calls: readonly ToolTrace[], tool: string, pick: (result: Record<string, unknown>) => unknown, key: string): Set<string> {
  const ids = new Set<string>();
  for (const call of calls) {
    if (call.name !== tool || call.outcome !== 'ok' || !call.result) continue;
    const items = pick(JSON.parse(call.result) as Record<string, unknown>);
    for (const item of Array.isArray(items) ? items : []) {
      const id = (item as Record<string, unknown> | null)?.[key];
      if (typeof id === 'string') ids.add(id);
    }
  }
  return ids;
}
