import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Day, type Order, type Refund, type RefundRequest } from './domain.js';
import { seededRandom } from 'savepoint/sim';

/**
 * Generates the bundled sample day (agents/refund-reconciler/sample-day.json): 25 refund requests on 2026-11-28,
 * a mix chosen so a correct reconciliation has to do every kind of thing once or more:
 * - 16 plain requests to refund ($5–$300, at most the order total, payment not refunded yet);
 * - 4 already refunded (a refund with that refundRequestId exists): refunding again pays twice;
 * - 3 amount mismatches (more than the order total / payment amount): flag for review;
 * - 2 valid refunds above $500 (the approval threshold): 72_500 and 129_900 cents.
 * Deterministic for a seed: `npx tsx scripts/make-sample-day.ts [--seed N] [--out path]`.
 */

export const SAMPLE_DATE = '2026-11-28';
export const DEFAULT_SEED = 20261128;

export type Kind = 'plain' | 'already_refunded' | 'mismatch' | 'large';
export type Mix = Record<Kind, number>;
const MIX: Mix = { plain: 16, already_refunded: 4, mismatch: 3, large: 2 };
const LARGE_AMOUNTS = [72_500, 129_900];

const CATALOG = [
  { sku: 'sku_wool_scarf', unitCents: 3_900 },
  { sku: 'sku_rain_jacket', unitCents: 12_900 },
  { sku: 'sku_trail_shoes', unitCents: 11_450 },
  { sku: 'sku_coffee_beans', unitCents: 1_800 },
  { sku: 'sku_desk_lamp', unitCents: 6_499 },
  { sku: 'sku_phone_case', unitCents: 2_499 },
  { sku: 'sku_yoga_mat', unitCents: 4_250 },
  { sku: 'sku_headphones', unitCents: 8_999 },
  { sku: 'sku_water_bottle', unitCents: 599 },
];
const REASONS = [
  'Arrived damaged',
  'Wrong size',
  'Item not as described',
  'Changed my mind',
  'Package never arrived',
  'Duplicate order',
  'Defective on arrival',
];

/** The sample day; other mixes make smaller or larger days of the same kinds (tests, the benchmark). */
export function makeSampleDay(seed: number = DEFAULT_SEED, mix: Mix = MIX): Day {
  if (mix.large > LARGE_AMOUNTS.length) throw new RangeError(`at most ${LARGE_AMOUNTS.length} large refunds, got ${mix.large}`);
  const random = seededRandom(seed);
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T;

  // The kinds, shuffled (Fisher–Yates) so the special cases are spread through the day.
  const kinds = (Object.entries(mix) as [Kind, number][]).flatMap(([kind, count]) => Array<Kind>(count).fill(kind));
  for (let i = kinds.length - 1; i > 0; i -= 1) {
    const j = int(0, i);
    [kinds[i], kinds[j]] = [kinds[j] as Kind, kinds[i] as Kind];
  }

  const day: Day = { date: SAMPLE_DATE, refundRequests: [], orders: [], payments: [], refunds: [] };
  let large = 0;
  kinds.forEach((kind, index) => {
    const n = String(index + 1).padStart(3, '0');
    const ids = { request: `rr_${n}`, order: `ord_${n}`, payment: `pay_${n}` };

    let items: Order['items'];
    let amountCents: number;
    if (kind === 'large') {
      // One expensive item refunded in full: valid, but above the approval threshold.
      amountCents = LARGE_AMOUNTS[large++] as number;
      items = [{ sku: pick(['sku_road_bike', 'sku_espresso_machine', 'sku_laptop']), quantity: 1, unitCents: amountCents }];
    } else {
      // A mismatch asks for more than the order total, and must itself stay under $300.
      items = orderItems(kind === 'mismatch' ? 22_000 : 30_000, int, pick);
      const total = totalOf(items);
      if (kind === 'mismatch') {
        amountCents = total + int(500, 8_000);
      } else {
        // The whole order or one line of it.
        const line = pick(items);
        amountCents = random() < 0.5 ? total : line.unitCents * line.quantity;
      }
    }
    const totalCents = totalOf(items);
    const full = amountCents >= totalCents;

    day.orders.push({
      id: ids.order,
      customerId: `cus_${String(int(1, 9_999)).padStart(4, '0')}`,
      totalCents,
      currency: 'usd',
      status: kind === 'mismatch' || full ? pick(['returned', 'delivered'] as const) : 'partially_returned',
      items,
    });
    day.payments.push({ id: ids.payment, orderId: ids.order, amountCents: totalCents, currency: 'usd' });
    const request: RefundRequest = {
      id: ids.request,
      orderId: ids.order,
      paymentId: ids.payment,
      amountCents,
      currency: 'usd',
      reason: pick(REASONS),
      requestedAt: `${SAMPLE_DATE}T${clock(int(7, 21), int(0, 59), int(0, 59))}Z`,
    };
    day.refundRequests.push(request);
    if (kind === 'already_refunded') {
      const refund: Refund = {
        id: `re_prior_${n}`,
        paymentId: ids.payment,
        amountCents,
        currency: 'usd',
        reason: request.reason,
        refundRequestId: ids.request,
        createdAt: `${SAMPLE_DATE}T${clock(22, int(0, 59), int(0, 59))}Z`,
      };
      day.refunds.push(refund);
    }
  });
  return Day.parse(day);
}

/** One to three lines whose total is between $5 and `maxTotal` cents. */
function orderItems(
  maxTotal: number,
  int: (min: number, max: number) => number,
  pick: <T>(items: readonly T[]) => T,
): Order['items'] {
  for (;;) {
    const count = int(1, 3);
    const skus = new Set<string>();
    const items: Order['items'] = [];
    while (items.length < count) {
      const product = pick(CATALOG);
      if (skus.has(product.sku)) continue;
      skus.add(product.sku);
      items.push({ ...product, quantity: int(1, 2) });
    }
    const total = totalOf(items);
    if (total >= 500 && total <= maxTotal) return items;
  }
}

function totalOf(items: Order['items']): number {
  return items.reduce((sum, item) => sum + item.unitCents * item.quantity, 0);
}

function clock(hours: number, minutes: number, seconds: number): string {
  return [hours, minutes, seconds].map((part) => String(part).padStart(2, '0')).join(':');
}

function main(): void {
  const { values } = parseArgs({
    options: { seed: { type: 'string', default: String(DEFAULT_SEED) }, out: { type: 'string', default: 'agents/refund-reconciler/sample-day.json' } },
  });
  const seed = Number(values.seed);
  if (!Number.isSafeInteger(seed)) throw new Error(`--seed must be an integer, got '${values.seed}'`);
  const out = resolve(values.out);
  const day = makeSampleDay(seed);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(day, null, 2)}\n`);
  console.log(`wrote ${out}: ${day.refundRequests.length} refund requests on ${day.date} (seed ${seed})`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) main();
