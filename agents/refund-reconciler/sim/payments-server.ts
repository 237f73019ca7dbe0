import * as z from 'zod';
import {
  Cents,
  Day,
  IsoDate,
  Payment,
  Refund,
  Report,
  ReportSummary,
  Review,
  type Order,
  type RefundRequest,
} from '../domain.js';
import { parseOrThrow } from 'savepoint';
import { faultInjector, openJournal, DROPPED, jsonReply, parseJsonBody, ProviderApiError, serveProvider, type FaultOptions, type ServiceReply, type ServiceRequest } from 'savepoint/sim';

/**
 * A simulated payments provider with Stripe-like semantics, served over real HTTP on loopback so
 * the agent's client, timeouts and retries are exercised for real. What matters for savepoint:
 * - every POST needs an `Idempotency-Key`; a replay with the same parameters returns the first
 *   result and pays nothing, a replay with other parameters is refused (422);
 * - the provider commits (journals) a side effect BEFORE it answers, so a lost response still means
 *   the money moved — the case idempotency keys exist for;
 * - injected faults happen before anything is done (a 503 never has a side effect), except the
 *   opt-in `dropResponses`, which loses the answer after the commit.
 */

export interface PaymentsServerOptions {
  /** The day the provider serves: refund requests, orders, payments and refunds paid earlier. */
  readonly day: Day;
  /** JSON-lines journal of what the provider created; reloaded on start. Omit to keep it in memory. */
  readonly dataFile?: string;
  /** Transient 503s before any work is done. Inspection routes (GET /v1/refunds …) are never faulted. */
  readonly faults?: FaultOptions;
  /** POSTs that commit and then drop the connection instead of answering (response lost). */
  readonly dropResponses?: FaultOptions;
  /** @default 0 (a random free port) */
  readonly port?: number;
  /** Clock for `createdAt`. @default () => new Date() */
  readonly now?: () => Date;
}

export interface PaymentsServer {
  /** e.g. `http://127.0.0.1:54321` (no trailing slash) */
  readonly url: string;
  /** Reaches this server in process (no socket); other URLs go to the network. */
  readonly fetch: typeof fetch;
  /** What opening the journal repaired (a torn last line cut off), for the operator to be told. */
  readonly recovered?: string;
  readonly port: number;
  close(): Promise<void>;
  /** Refunds paid through this server (not the day's earlier refunds), oldest first. */
  refunds(): Refund[];
  /** The idempotency key of everything created (refunds, reviews, reports), oldest first. */
  createdKeys(): string[];
  reviews(): Review[];
  reports(): Report[];
  /** Every HTTP request received, faulted ones included. */
  requestCount(): number;
  /** An outage: while on, every faultable request fails with 503 (the circuit breaker's case). */
  setOutage(on: boolean): void;
  /**
   * Forgets what was created since the start: the day as it was, a fresh sandbox (the benchmark's
   * restart-from-scratch baseline runs every attempt in the same world), or `day` from now on when
   * given (the growth benchmark gives each run a day of its own refund requests). In memory only.
   */
  resetWorld(day?: Day): void;
}

const CreateRefundBody = z
  .object({ paymentId: z.string().min(1), amountCents: Cents.positive(), reason: z.string(), refundRequestId: z.string().min(1) })
  .strict();
const CreateReviewBody = z.object({ refundRequestId: z.string().min(1), reason: z.string() }).strict();
const CreateReportBody = z.object({ date: IsoDate, summary: ReportSummary, text: z.string() }).strict();
/** The list's query, built once: zod compiles a schema on its first parse, so one built per request compiled on every list. */
const ListQuery = z.object({ date: IsoDate });

/** One journal line: a created object with the idempotency key and request fingerprint that made it. */
const JournalEntry = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('refund'), key: z.string(), fingerprint: z.string(), record: Refund }),
  z.object({ kind: z.literal('review'), key: z.string(), fingerprint: z.string(), record: Review }),
  z.object({ kind: z.literal('report'), key: z.string(), fingerprint: z.string(), record: Report }),
]);
type JournalEntry = z.infer<typeof JournalEntry>;

export async function startPaymentsServer(options: PaymentsServerOptions): Promise<PaymentsServer> {
  let served = servedDay(options.day);
  const now = options.now ?? (() => new Date());
  const injectFault = faultInjector(options.faults);
  let outage = false;
  const dropResponse = faultInjector(options.dropResponses);
  const journal = openJournal(options.dataFile, JournalEntry);

  const byKey = new Map<string, JournalEntry>();
  const created = { refund: [] as Refund[], review: [] as Review[], report: [] as Report[] };
  const remember = (entry: JournalEntry) => {
    byKey.set(entry.key, entry);
    if (entry.kind === 'refund') created.refund.push(entry.record);
    else if (entry.kind === 'review') created.review.push(entry.record);
    else created.report.push(entry.record);
  };
  journal.entries.forEach(remember);
  let requests = 0;

  function paymentView(paymentId: string): Payment {
    const payment = served.payments.get(paymentId);
    if (!payment) throw new ProviderApiError(404, 'invalid_request_error', `No such payment: '${paymentId}'`);
    const refunds = [...served.day.refunds, ...created.refund].filter((refund) => refund.paymentId === paymentId);
    const refundedCents = refunds.reduce((sum, refund) => sum + refund.amountCents, 0);
    const status = refundedCents >= payment.amountCents ? 'refunded' : refundedCents > 0 ? 'partially_refunded' : 'succeeded';
    return { ...payment, refundedCents, status, refunds };
  }

  function requireRefundRequest(id: string): void {
    if (!served.requestIds.has(id)) throw new ProviderApiError(404, 'invalid_request_error', `No such refund request: '${id}'`);
  }

  /**
   * The idempotent create: replay, refuse, or run `create` and journal the result before answering.
   * Everything from the key lookup to the journal write is synchronous, so two concurrent requests
   * with one key cannot both create.
   */
  function idempotent(
    request: ServiceRequest,
    path: string,
    body: unknown,
    create: (key: string, fingerprint: string) => JournalEntry,
  ): ServiceReply | typeof DROPPED {
    const key = request.headers['idempotency-key'];
    if (typeof key !== 'string' || key.length === 0 || key.length > 255) {
      throw new ProviderApiError(400, 'invalid_request_error', 'Idempotency-Key: header is required (1 to 255 characters)');
    }
    const fingerprint = stableStringify([path, body]);
    const previous = byKey.get(key);
    if (previous) {
      if (previous.fingerprint !== fingerprint) {
        throw new ProviderApiError(
          422,
          'idempotency_error',
          `Keys for idempotent requests can only be used with the same parameters they were first used with (key '${key}')`,
        );
      }
      return jsonReply(200, previous.record, { 'Idempotent-Replayed': 'true' });
    }
    const entry = create(key, fingerprint);
    journal.append(entry); // the provider commits first: a response lost after this still paid
    remember(entry);
    if (dropResponse()) {
      return DROPPED;
    }
    return jsonReply(200, entry.record);
  }

  const nextId = (prefix: string, kind: JournalEntry['kind']) => `${prefix}_${String(created[kind].length + 1).padStart(4, '0')}`;

  async function handle(request: ServiceRequest): Promise<ServiceReply | typeof DROPPED> {
    requests += 1;
    const url = new URL(request.url, 'http://127.0.0.1');
    const path = url.pathname;
    const route = `${request.method} ${path}`;
    const raw = request.body;

    // What the provider paid is for people and tests; faulting it would only disturb the seed's sequence.
    const inspection = route === 'GET /v1/refunds' || route === 'GET /v1/reviews' || route === 'GET /v1/reports';
    if (!inspection && outage) throw new ProviderApiError(503, 'api_error', 'provider outage');
    if (!inspection && injectFault()) throw new ProviderApiError(503, 'api_error', 'injected transient failure');

    if (route === 'GET /v1/refund_requests') {
      const date = parseOrThrow(ListQuery, { date: url.searchParams.get('date') ?? undefined }, 'query').date;
      const data: RefundRequest[] = date === served.day.date ? served.day.refundRequests : [];
      return jsonReply(200, { data });
    }
    const order = /^GET \/v1\/orders\/([^/]+)$/.exec(route);
    if (order) {
      const id = decodeURIComponent(order[1] ?? '');
      const found: Order | undefined = served.orders.get(id);
      if (!found) throw new ProviderApiError(404, 'invalid_request_error', `No such order: '${id}'`);
      return jsonReply(200, found);
    }
    const payment = /^GET \/v1\/payments\/([^/]+)$/.exec(route);
    if (payment) return jsonReply(200, paymentView(decodeURIComponent(payment[1] ?? '')));

    if (route === 'GET /v1/refunds') return jsonReply(200, { data: created.refund });
    if (route === 'GET /v1/reviews') return jsonReply(200, { data: created.review });
    if (route === 'GET /v1/reports') return jsonReply(200, { data: created.report });

    if (route === 'POST /v1/refunds') {
      const body = parseOrThrow(CreateRefundBody, parseJsonBody(raw), 'refund body');
      return idempotent(request, path, body, (key, fingerprint) => {
        const payment = paymentView(body.paymentId);
        requireRefundRequest(body.refundRequestId);
        const refundable = payment.amountCents - payment.refundedCents;
        if (body.amountCents > refundable) {
          throw new ProviderApiError(
            400,
            'invalid_request_error',
            `amountCents: ${body.amountCents} exceeds the refundable amount ${refundable} of payment '${body.paymentId}'`,
          );
        }
        const record: Refund = { id: nextId('re', 'refund'), ...body, currency: 'usd', createdAt: now().toISOString() };
        return { kind: 'refund', key, fingerprint, record };
      });
    }
    if (route === 'POST /v1/reviews') {
      const body = parseOrThrow(CreateReviewBody, parseJsonBody(raw), 'review body');
      return idempotent(request, path, body, (key, fingerprint) => {
        requireRefundRequest(body.refundRequestId);
        const record: Review = { id: nextId('rv', 'review'), ...body, createdAt: now().toISOString() };
        return { kind: 'review', key, fingerprint, record };
      });
    }
    if (route === 'POST /v1/reports') {
      const body = parseOrThrow(CreateReportBody, parseJsonBody(raw), 'report body');
      return idempotent(request, path, body, (key, fingerprint) => {
        const record: Report = { id: nextId('rp', 'report'), ...body, createdAt: now().toISOString() };
        return { kind: 'report', key, fingerprint, record };
      });
    }
    throw new ProviderApiError(404, 'invalid_request_error', `Unrecognized request URL (${route})`);
  }

  const { port, close, fetch } = await serveProvider(handle, { port: options.port, journal });

  return {
    url: `http://127.0.0.1:${port}`,
    fetch,
    ...(journal.recovered && { recovered: journal.recovered }),
    port,
    refunds: () => [...created.refund],
    createdKeys: () => [...byKey.keys()],
    reviews: () => [...created.review],
    reports: () => [...created.report],
    requestCount: () => requests,
    setOutage: (on) => {
      outage = on;
    },
    resetWorld: (next) => {
      if (options.dataFile) throw new Error('resetWorld() would leave the journal behind: only an in-memory provider can be reset');
      byKey.clear();
      for (const list of Object.values(created)) list.length = 0;
      if (next) served = servedDay(next);
    },
    close,
  };
}

/** A day as the provider looks it up: its orders, payments and refund requests by id. */
function servedDay(input: Day) {
  const day = parseOrThrow(Day, input, 'day');
  return {
    day,
    orders: new Map(day.orders.map((order) => [order.id, order])),
    payments: new Map(day.payments.map((payment) => [payment.id, payment])),
    requestIds: new Set(day.refundRequests.map((request) => request.id)),
  };
}

/** JSON with object keys sorted, so two requests with the same parameters have one fingerprint. */
function stableStringify(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${stableStringify(item)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
