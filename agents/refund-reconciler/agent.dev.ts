import { existsSync, rmSync } from 'node:fs';
import { withDev, type DevWorld, type DevWorldOptions } from 'savepoint';
import { refundReconciler as agent } from './agent.js';
import { loadDay } from './day-file.js';
import { dollars, type Day } from './domain.js';
import { startPaymentsServer, type PaymentsServer } from './sim/payments-server.js';
import { decide } from './sim/policy.js';

/**
 * The refund reconciler's local-only parts: the simulated payments provider and the scripted
 * model. The CLI finds this module beside agent.ts (`savepoint run --agent refund-reconciler`);
 * a deployment bundles agent.ts alone, so no Lambda function carries the simulator.
 */

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

/** The refund reconciler with its simulated world and scripted model: what local runs and tests run. */
export const refundReconciler = withDev(agent, { world: startRefundWorld, checkData: (path) => void loadDay(path), policy: decide });

export default refundReconciler;
