import { defineAgent, defineTool, parseOrThrow, type DevWorld, type DevWorldOptions, type ToolTrace } from 'savepoint';
import { existsSync, rmSync } from 'node:fs';
import { z } from 'zod';
import { loadDay } from './day-file.js';
import { Cents, IsoDate, ReportSummary, type CommerceApi, type Day } from './domain.js';
import { HttpCommerceApi } from './payments-client.js';
import { startPaymentsServer, type PaymentsServer } from './sim/payments-server.js';
import { decide } from './sim/policy.js';

/**
 * The refund reconciler: savepoint's first example agent. Every night it reconciles the refund
 * requests customers filed the day before: looks up each order and payment, then refunds, skips or
 * flags the request for a person; refunds above a threshold wait for approval. It uses only the
 * public API (`savepoint`); the harness imports none of it.
 */

const Id = z.string().min(1).max(64);

export const RefundRunInput = z
  .object({
    /** The day whose refund requests are reconciled. */
    date: IsoDate,
  })
  .strict();

/**
 * Refunds of one request above this total wait for a person. Policy, so part of the agent's code
 * (fingerprinted, deployed), never of its input: whoever starts a run writes the input.
 */
export const APPROVAL_THRESHOLD_CENTS = 50_000;
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
  // On the running total of the request in this run: a refund split into parts under the threshold
  // ($499.99 + $499.99 + $299.02) waits for a person from the part that crosses it.
  needsApproval: (args, _run, facts) => {
    const earlier = facts.calls
      .filter((call) => call.name === 'issue_refund' && call.outcome === 'ok' && call.args['refundRequestId'] === args.refundRequestId)
      .reduce((sum, call) => sum + Number(call.args['amountCents']), 0);
    const total = earlier + args.amountCents;
    if (total <= APPROVAL_THRESHOLD_CENTS) return undefined;
    return {
      summary: `issue_refund ${dollars(args.amountCents)} for ${args.refundRequestId}${earlier > 0 ? ` (${dollars(total)} with the earlier refunds of this request)` : ''}`,
      amount: { minor: total, currency: 'usd' },
      details: { payment: args.paymentId, refundRequest: args.refundRequestId, reason: args.reason, ...(earlier > 0 && { refundedBefore: dollars(earlier) }) },
    };
  },
  describe: (args) => `refund ${dollars(args.amountCents)} of payment ${args.paymentId} for ${args.refundRequestId}`,
  execute: (args, { deps, idempotencyKey, signal }) => (deps as Deps).commerce.createRefund(args, idempotencyKey, signal),
});

const flagForReview = defineTool({
  name: 'flag_for_review',
  description: 'Puts a refund request in the human review queue with the reason it cannot be refunded automatically.',
  input: z.object({ refundRequestId: Id, reason: z.string().min(1).max(500) }).strict(),
  effect: 'write',
  idempotencyKeys: true,
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

/** The simulated world of a local run: the payments provider serving a day of refund requests. */
export interface RefundWorld extends DevWorld {
  readonly payments: PaymentsServer;
  readonly day: Day;
}

export { loadDay };

export const SAMPLE_DAY = new URL('./sample-day.json', import.meta.url).pathname;

export async function startRefundWorld(options: DevWorldOptions & { day?: Day }): Promise<RefundWorld> {
  const day = options.day ?? loadDay(options.dataFile ?? SAMPLE_DAY);
  const journal = options.stateDir && `${options.stateDir}/payments.jsonl`;
  const journalExisted = journal !== undefined && existsSync(journal);
  const payments = await startPaymentsServer({
    day,
    dataFile: journal,
    faults: { failRate: options.failRate, seed: options.seed + 1_000_003 },
    now: options.now,
  });
  const lost = journal && (lostFromJournal(payments, options.ledger?.completedWrites ?? {}) ?? unknownToLedger(payments, options.ledger));
  if (lost) {
    await payments.close();
    if (!journalExisted) rmSync(journal, { force: true }); // opening made an empty one: leave the directory as found
    throw new Error(
      lost.startsWith('the journal holds')
        ? `${journal}: the ledger of this state directory does not know the runs that made the provider's records — ${lost}. ` +
            'A run would pay again what was already paid: restore the ledger (ledger.jsonl, ledger.head, keys/) from a backup, or start over in a new --state-dir.'
        : `${journal}: the payments provider's journal ${journalExisted ? 'has lost records' : 'is missing'} — ${lost}. ` +
            'A run would pay again what was already paid: restore the journal from a backup, or start over in a new --state-dir.',
    );
  }
  return {
    env: { PAYMENTS_API_URL: payments.url },
    fetch: payments.fetch,
    endpoints: { payments: payments.url },
    defaultInput: { date: day.date },
    ...(payments.recovered && { notes: [payments.recovered] }),
    payments,
    day,
    inspect: async () => {
      const [refunds, reviews, reports] = [payments.refunds(), payments.reviews(), payments.reports()];
      const total = refunds.reduce((sum, refund) => sum + refund.amountCents, 0);
      return {
        json: { refunds, reviews, reports },
        lines: [
          `${refunds.length} refunds paid, ${dollars(total)} in all`,
          ...refunds.map((refund) => `  ${refund.id}  ${refund.refundRequestId}  ${refund.paymentId}  ${dollars(refund.amountCents)}`),
          `${reviews.length} flagged for review, ${reports.length} report(s) posted`,
        ],
      };
    },
    close: () => payments.close(),
  };
}

/** The provider's records per side-effecting tool: each call the ledger records as done made one. */
const JOURNALED_BY_TOOL = {
  issue_refund: (payments: PaymentsServer) => payments.refunds().length,
  flag_for_review: (payments: PaymentsServer) => payments.reviews().length,
  post_report: (payments: PaymentsServer) => payments.reports().length,
} as const;

/**
 * The provider's records made under idempotency keys the ledger never claimed (a deleted or
 * replaced ledger beside a kept journal), in words; undefined when the ledger knows them all, or
 * when there is no ledger to ask.
 */
function unknownToLedger(payments: PaymentsServer, ledger: DevWorldOptions['ledger']): string | undefined {
  if (!ledger) return undefined;
  const unknown = payments.createdKeys().filter((key) => !ledger.idempotencyKeys.has(key));
  if (unknown.length === 0) return undefined;
  return `the journal holds ${unknown.length} record(s) whose idempotency key no call in the ledger claimed (the first: ${unknown[0]})`;
}

/**
 * What the ledger remembers doing that the provider's journal does not hold (a deleted or cut
 * journal), in words; undefined when the journal holds at least as much.
 */
function lostFromJournal(payments: PaymentsServer, completedWrites: Readonly<Record<string, number>>): string | undefined {
  const gaps = Object.entries(JOURNALED_BY_TOOL).flatMap(([tool, held]) => {
    const done = completedWrites[tool] ?? 0;
    const kept = held(payments);
    return done > kept ? [`the ledger records ${done} completed ${tool} call(s), the journal holds ${kept}`] : [];
  });
  return gaps.length > 0 ? gaps.join('; ') : undefined;
}

export const refundReconciler = defineAgent<RefundRunInput, Deps, RefundWorld>({
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
  deps: (env, { fetch }) => {
    const { PAYMENTS_API_URL } = parseOrThrow(Environment, env, 'refund-reconciler environment');
    return { commerce: new HttpCommerceApi({ baseUrl: PAYMENTS_API_URL, fetch }) };
  },
  // One run per day, however it is started: the run id is the idempotency key of the whole run.
  runId: (input) => `refunds-${input.date}`,
  // The nightly run reconciles the day before the schedule fires.
  scheduled: (eventTime) => ({ date: new Date(eventTime.getTime() - 24 * 3600 * 1000).toISOString().slice(0, 10) }),
  report: refundSummary,
  dev: { world: startRefundWorld, checkData: (path) => void loadDay(path), policy: decide },
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

function dollars(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}
