import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Day, type RefundRequest } from '../../agents/refund-reconciler/domain.js';
import { HttpCommerceApi } from '../../agents/refund-reconciler/payments-client.js';
import { ErrorNames, InvalidInputError, TerminalError, TransientError } from '../../lambdas/shared/errors.js';
import { DEFAULT_SEED, makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { manualClock } from '../support/manual-clock.js';
import { startPaymentsServer, type PaymentsServer, type PaymentsServerOptions } from '../../agents/refund-reconciler/sim/payments-server.js';

const day = Day.parse(JSON.parse(readFileSync(new URL('../../agents/refund-reconciler/sample-day.json', import.meta.url), 'utf8')));
const orderOf = (request: RefundRequest) => day.orders.find((order) => order.id === request.orderId);
const alreadyRefunded = (request: RefundRequest) => day.refunds.some((refund) => refund.refundRequestId === request.id);
const isMismatch = (request: RefundRequest) => request.amountCents > (orderOf(request)?.totalCents ?? 0);
/** A request that should simply be refunded. */
const plain = day.refundRequests.find((r) => !alreadyRefunded(r) && !isMismatch(r) && r.amountCents <= 50_000) as RefundRequest;
const refundOf = (request: RefundRequest, amountCents = request.amountCents) => ({
  paymentId: request.paymentId,
  amountCents,
  reason: request.reason,
  refundRequestId: request.id,
});

/** Servers started by a test, closed after it. */
const servers: PaymentsServer[] = [];
async function start(options: Partial<PaymentsServerOptions> = {}): Promise<{ server: PaymentsServer; api: HttpCommerceApi }> {
  const server = await startPaymentsServer({ day, ...options });
  servers.push(server);
  return { server, api: new HttpCommerceApi({ baseUrl: server.url, timeoutMs: 2_000 }) };
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

function post(server: PaymentsServer, path: string, body: unknown, key?: string): Promise<Response> {
  const headers: Record<string, string> = { 'Content-Type': 'application/json' };
  if (key) headers['Idempotency-Key'] = key;
  return fetch(`${server.url}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
}

describe('reads', () => {
  it('lists the day and serves orders and payments in the domain shapes', async () => {
    const { api } = await start();
    expect(await api.listRefundRequests(day.date)).toEqual(day.refundRequests);
    expect(await api.listRefundRequests('2026-11-27')).toEqual([]);
    expect(await api.getOrder(plain.orderId)).toEqual(orderOf(plain));

    const fresh = await api.getPayment(plain.paymentId);
    expect(fresh).toMatchObject({ refundedCents: 0, status: 'succeeded', refunds: [] });

    const seed = day.refunds[0];
    if (!seed) throw new Error('sample day has no earlier refunds');
    const refunded = await api.getPayment(seed.paymentId);
    expect(refunded.refunds).toEqual([seed]);
    expect(refunded.refundedCents).toBe(seed.amountCents);
    expect(refunded.status).toBe(seed.amountCents >= refunded.amountCents ? 'refunded' : 'partially_refunded');
  });

  it('maps unknown ids to InvalidInput and a bad date to a 400 naming the field', async () => {
    const { api } = await start();
    await expect(api.getOrder('ord_nope')).rejects.toThrow(InvalidInputError);
    await expect(api.getPayment('pay_nope')).rejects.toThrow(/GET \/v1\/payments\/pay_nope → 404: .*No such payment/);
    await expect(api.listRefundRequests('28/11/2026')).rejects.toThrow(/→ 400: .*date: expected a date/);
  });
});

describe('idempotent refunds', () => {
  it('pays once for one key and replays the first refund', async () => {
    const { server, api } = await start();
    const first = await api.createRefund(refundOf(plain), 'run-1:turn-3:call-a');
    const again = await api.createRefund(refundOf(plain), 'run-1:turn-3:call-a');
    expect(again).toEqual(first);
    expect(first).toMatchObject({ id: 're_0001', amountCents: plain.amountCents, refundRequestId: plain.id });
    expect(server.refunds()).toEqual([first]);
    expect(await api.listRefunds()).toEqual([first]);
    expect(await api.getPayment(plain.paymentId)).toMatchObject({ refundedCents: plain.amountCents, refunds: [first] });

    const replay = await post(server, '/v1/refunds', refundOf(plain), 'run-1:turn-3:call-a');
    expect(replay.status).toBe(200);
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
  });

  it('refuses a key reused with other parameters as Terminal', async () => {
    const { server, api } = await start();
    await api.createRefund(refundOf(plain, 500), 'key-1');
    const error = await api.createRefund(refundOf(plain, 600), 'key-1').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(TerminalError);
    expect(error).toMatchObject({ name: ErrorNames.Terminal, message: expect.stringMatching(/POST \/v1\/refunds → 422: idempotency_error/) });
    expect(server.refunds()).toHaveLength(1);
  });

  it('refuses a refund above the refundable amount as InvalidInput', async () => {
    const { server, api } = await start();
    const mismatch = day.refundRequests.find(isMismatch) as RefundRequest;
    await expect(api.createRefund(refundOf(mismatch), 'k-mismatch')).rejects.toThrow(/400: invalid_request_error: amountCents: .* exceeds the refundable amount/);
    // An earlier refund counts against the payment too.
    const seed = day.refunds[0];
    const payment = day.payments.find((p) => p.id === seed?.paymentId);
    const request = day.refundRequests.find((r) => r.id === seed?.refundRequestId) as RefundRequest;
    await expect(api.createRefund(refundOf(request, payment?.amountCents), 'k-twice')).rejects.toThrow(InvalidInputError);
    expect(server.refunds()).toEqual([]);
  });

  it('requires an Idempotency-Key and a valid body, naming the field', async () => {
    const { server, api } = await start();
    const noKey = await post(server, '/v1/refunds', refundOf(plain));
    expect(noKey.status).toBe(400);
    expect(await noKey.json()).toMatchObject({ error: { type: 'invalid_request_error', message: expect.stringContaining('Idempotency-Key') } });

    const bad = await post(server, '/v1/refunds', { ...refundOf(plain), amountCents: '12.50' }, 'k-bad');
    expect(bad.status).toBe(400);
    expect((await bad.json()).error.message).toMatch(/amountCents: /);

    await expect(api.createRefund(refundOf(plain, -5), 'k-neg')).rejects.toThrow(/InvalidInput|amountCents: /);
    await expect(api.createReview({ refundRequestId: '', reason: 'x' }, 'k-rv')).rejects.toThrow(/refundRequestId: /);
    expect(server.refunds()).toEqual([]);
  });

  it('creates reviews and reports with the same key semantics', async () => {
    const { server, api } = await start();
    const review = await api.createReview({ refundRequestId: plain.id, reason: 'amount above order total' }, 'rv-1');
    expect(await api.createReview({ refundRequestId: plain.id, reason: 'amount above order total' }, 'rv-1')).toEqual(review);
    const summary = { issued: 1, skipped: 0, flagged: 1, issuedCents: 500 };
    const report = await api.postReport({ date: day.date, summary, text: 'done' }, 'rp-1');
    await expect(api.postReport({ date: day.date, summary, text: 'other' }, 'rp-1')).rejects.toThrow(TerminalError);
    // One key space across endpoints, as with Stripe.
    await expect(api.createReview({ refundRequestId: plain.id, reason: 'x' }, 'rp-1')).rejects.toThrow(TerminalError);
    expect(server.reviews()).toEqual([review]);
    expect(server.reports()).toEqual([report]);
    expect(report).toMatchObject({ id: 'rp_0001', date: day.date, summary });
  });
});

describe('persistence', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'savepoint-payments-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('remembers refunds and idempotency keys across a restart', async () => {
    const dataFile = join(dir, 'payments.jsonl');
    const before = await start({ dataFile });
    const first = await before.api.createRefund(refundOf(plain), 'key-restart');
    await before.server.close();

    const after = await start({ dataFile });
    expect(after.server.refunds()).toEqual([first]);
    expect(await after.api.createRefund(refundOf(plain), 'key-restart')).toEqual(first);
    await expect(after.api.createRefund(refundOf(plain, 600), 'key-restart')).rejects.toThrow(TerminalError);
    expect(after.server.refunds()).toHaveLength(1);
    expect((await after.api.getPayment(plain.paymentId)).refundedCents).toBe(plain.amountCents);

    // Ids continue; a write torn by a crash (no newline) was never answered and is dropped.
    appendFileSync(dataFile, '{"kind":"refund","key":"torn"');
    await after.server.close();
    const again = await start({ dataFile });
    const other = day.refundRequests.find((r) => r !== plain && !alreadyRefunded(r) && !isMismatch(r)) as RefundRequest;
    expect(await again.api.createRefund(refundOf(other), 'key-2')).toMatchObject({ id: 're_0002' });
  });
});

describe('faults', () => {
  async function outcomes(seed: number): Promise<string[]> {
    const { api } = await start({ faults: { failRate: 0.5, seed } });
    const results: string[] = [];
    for (let i = 0; i < 16; i += 1) {
      results.push(await api.getOrder(plain.orderId).then(() => 'ok', (error: unknown) => (error as Error).name));
    }
    return results;
  }

  it('injects transient 503s deterministically for a seed', async () => {
    const first = await outcomes(42);
    expect(first).toContain('ok');
    expect(first).toContain(ErrorNames.Transient);
    expect(first.every((outcome) => outcome === 'ok' || outcome === ErrorNames.Transient)).toBe(true);
    expect(await outcomes(42)).toEqual(first);
    expect(await outcomes(43)).not.toEqual(first);
  });

  it('fails before any side effect, so retrying with the key pays once', async () => {
    const { server, api } = await start({ faults: { failRate: 0.5, seed: 7 } });
    let transient = 0;
    for (;;) {
      try {
        await api.createRefund(refundOf(plain), 'key-retry');
        break;
      } catch (error) {
        expect(error).toBeInstanceOf(TransientError);
        expect((error as Error).message).toMatch(/POST \/v1\/refunds → 503: api_error: injected transient failure/);
        transient += 1;
        expect(server.refunds()).toEqual([]);
      }
    }
    expect(transient).toBe(2); // seed 7 fails the first two attempts
    // Inspection routes are not faulted.
    for (let i = 0; i < 5; i += 1) expect(await api.listRefunds()).toHaveLength(1);
  });

  it('a response lost after the commit is a Transient error, and the retry replays', async () => {
    const { server, api } = await start({ dropResponses: { failRate: 0.99, seed: 1 } });
    await expect(api.createRefund(refundOf(plain), 'key-lost')).rejects.toThrow(TransientError);
    expect(server.refunds()).toHaveLength(1); // the provider paid
    expect(await api.createRefund(refundOf(plain), 'key-lost')).toEqual(server.refunds()[0]);
    expect(server.refunds()).toHaveLength(1);
  });
});

describe('client', () => {
  const respond = (status: number, body: unknown): typeof fetch => async () =>
    new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });

  it('maps status codes to the error contract', async () => {
    const api = (status: number) => new HttpCommerceApi({ baseUrl: 'http://x', fetch: respond(status, { error: { type: 't', message: 'm' } }) });
    await expect(api(429).getOrder('o')).rejects.toThrow(TransientError);
    await expect(api(500).getOrder('o')).rejects.toThrow(TransientError);
    await expect(api(401).getOrder('o')).rejects.toThrow(TerminalError);
    await expect(api(409).getOrder('o')).rejects.toThrow(TerminalError);
    await expect(api(404).getOrder('o')).rejects.toThrow(/GET \/v1\/orders\/o → 404: t: m/);
  });

  it('treats a response that breaks the schema as Terminal, naming the field', async () => {
    const order = { ...orderOf(plain), totalCents: -1 };
    const api = new HttpCommerceApi({ baseUrl: 'http://x', fetch: respond(200, order) });
    await expect(api.getOrder(plain.orderId)).rejects.toThrow(TerminalError);
    await expect(api.getOrder(plain.orderId)).rejects.toThrow(/totalCents: /);
  });

  it('times out as Transient and honours the caller signal', async () => {
    const hang: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)));
    // The client's timeout runs on the test's clock: it fires as the clock is moved past it.
    const clock = manualClock();
    const api = new HttpCommerceApi({ baseUrl: 'http://x', fetch: hang, timeoutMs: 20, timers: clock });
    let settled = false;
    const timingOut = api.getOrder('o').finally(() => (settled = true));
    // Handled from the start: it rejects while the test is between turns, before the expect below.
    const failure = timingOut.then(() => undefined, (error: unknown) => error);
    const turn = () => new Promise((resolve) => setImmediate(resolve));
    await turn();
    clock.advance(19);
    await turn();
    expect(settled).toBe(false);
    clock.advance(1);
    await turn();
    expect(settled).toBe(true);
    expect(await failure).toBeInstanceOf(Error);
    expect((await failure as Error).message).toMatch(/GET \/v1\/orders\/o failed: timed out after 20 ms/);
    const caller = new AbortController();
    const pending = new HttpCommerceApi({ baseUrl: 'http://x', fetch: hang }).getOrder('o', caller.signal);
    caller.abort();
    await expect(pending).rejects.toThrow(/aborted by the caller/);
  });

  it('reports a refused connection as Transient', async () => {
    const { server } = await start();
    const url = server.url;
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    await expect(new HttpCommerceApi({ baseUrl: url }).getOrder('o')).rejects.toThrow(/failed: network error/);
  });
});

describe('sample day', () => {
  it('has 25 requests with the intended mix', () => {
    expect(day.date).toBe('2026-11-28');
    expect(day.refundRequests.map((r) => r.id)).toEqual(Array.from({ length: 25 }, (_, i) => `rr_${String(i + 1).padStart(3, '0')}`));
    expect(day.refundRequests.filter(alreadyRefunded)).toHaveLength(4);
    for (const request of day.refundRequests.filter(alreadyRefunded)) {
      expect(day.refunds.find((refund) => refund.refundRequestId === request.id)?.amountCents).toBe(request.amountCents);
    }
    expect(day.refundRequests.filter(isMismatch)).toHaveLength(3);
    const large = day.refundRequests.filter((r) => r.amountCents > 50_000);
    expect(large.map((r) => r.amountCents)).toEqual([72_500, 129_900]);
    expect(large.some((r) => alreadyRefunded(r) || isMismatch(r))).toBe(false);
    for (const request of day.refundRequests.filter((r) => r.amountCents <= 50_000)) {
      expect(request.amountCents).toBeGreaterThanOrEqual(500);
      expect(request.amountCents).toBeLessThanOrEqual(30_000);
    }
    for (const payment of day.payments) expect(payment.amountCents).toBe(day.orders.find((o) => o.id === payment.orderId)?.totalCents);
  });

  it('is what the generator makes from the default seed', () => {
    expect(makeSampleDay(DEFAULT_SEED)).toEqual(day);
    expect(makeSampleDay(7)).not.toEqual(day);
  });
});
