/**
 * A fleet budget's day counter under a fleet (issue 34 item 4): one DynamoDB item that every run of
 * an agent reserves from is a hot key — a partition takes about 1,000 write units a second, and
 * dynalite never throttles, so the twin cannot show it. This is a discrete-event model on simulated
 * time of N runs making their model calls, each reserved by the ledger's own rules
 * (lambdas/ledger/fleet-leases.ts `leaseKeys`, `leaseAndReserve`, `returnLease`, run on the items
 * as the storage engine would), with:
 * - the counter's partition as a token bucket of write units (1,000 WCU/s, a burst of one second);
 *   a transactional write costs 2 WCU per KB on each item it writes, and a write whose condition
 *   fails costs its units too (DynamoDB charges failed conditional writes), a throttled one none;
 * - optimistic writes: a lease reads the counter, and its write lands a ledger latency later; if
 *   another writer changed the counter meanwhile, its condition fails and it backs off with full
 *   jitter (lambdas/ledger/dynamodb-ledger.ts `backoff`) and tries again, as a throttled one does.
 * Two ways, the same runs: `lease` (chunks of `leaseDollars`) and `per call` (a chunk no bigger
 * than each call's reservation: every call writes the counter). Prints writes to the counter, the
 * peak per second, throttles and failed conditions, and what was spent against the limit.
 *
 *   npx tsx bench/fleet-budget.ts [--runs 1000] [--calls 20] [--dollars 100]
 */
import { pathToFileURL } from 'node:url';
import { leaseAndReserve, leaseKeys, leaseToReturn, returnLease, fleetKey } from '../lambdas/ledger/fleet-leases.js';
import type { FleetReserveRequest } from '../lambdas/ledger/ledger.js';
import type { ItemsStep, Stored } from '../lambdas/ledger/protocol.js';
import { agentCounterPk, DEFAULT_LEASE_MICROS, fleetCounters, fleetDay } from '../lambdas/records/fleet.js';
import type { RunRecord } from '../lambdas/records/ledger-records.js';
import { seededRandom } from '../sim/random.js';
import { logNormal } from './fleet-sim.js';

/** A DynamoDB partition's write throughput (write units a second): https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/bp-partition-key-design.html */
export const PARTITION_WCU_PER_SECOND = 1_000;
/** Write units of one item in a transaction (TransactWriteItems: 2 per KB; the counter and a run item are under 1 KB and a few KB). */
const COUNTER_TX_WCU = 2;

export interface BudgetModelOptions {
  readonly runs: number;
  readonly callsPerRun: number;
  readonly dollarsPerDay: number;
  /** Micro-dollars a lease takes at most (0: each call's own reservation, no chunk). */
  readonly leaseMicros: number;
  /** The bound reserved per call, and what a call then costs (micro-dollars). */
  readonly reservationMicros: number;
  readonly costMicros: number;
  /** Runs started a second (issue 34's sustained rate: 100/s). */
  readonly startsPerSecond: number;
  readonly seed?: number;
}

export interface BudgetModelFigures {
  readonly counterWrites: number;
  readonly peakWritesPerSecond: number;
  readonly throttled: number;
  readonly failedConditions: number;
  readonly spentMicros: number;
  readonly limitMicros: number;
  readonly callsMade: number;
  readonly runsStopped: number;
  readonly simulatedSeconds: number;
}

/** Runs the model: every run starts at 0 and makes its calls one after the other (a model latency each). */
export function runBudgetModel(options: BudgetModelOptions): BudgetModelFigures {
  const random = seededRandom(options.seed ?? 1);
  const modelLatency = logNormal(random, { median: 2, p95: 6, max: 30 });
  const ledgerLatency = logNormal(random, { median: 0.008, p95: 0.02, max: 0.2 });
  const now = new Date('2026-12-02T08:00:00.000Z');
  const day = fleetDay(now);
  const budget = { agent: { dollarsPerDay: options.dollarsPerDay } };
  const counters = fleetCounters('agent', budget, day);
  const items = new Map<string, Stored>();
  let counterVersion = 0;
  let bucket = { tokens: PARTITION_WCU_PER_SECOND, at: 0 };
  const writesPerSecond = new Map<number, number>();
  const figures = { counterWrites: 0, throttled: 0, failedConditions: 0, callsMade: 0, runsStopped: 0, spentMicros: 0 };

  type Event = { at: number; run: number; action: () => void };
  const queue: Event[] = [];
  const at = (time: number, run: number, action: () => void) => {
    queue.push({ at: time, run, action });
  };
  const takeUnits = (time: number, units: number) => {
    bucket = { tokens: Math.min(PARTITION_WCU_PER_SECOND, bucket.tokens + (time - bucket.at) * PARTITION_WCU_PER_SECOND), at: time };
    if (bucket.tokens < units) return false;
    bucket.tokens -= units;
    return true;
  };
  const apply = <R>(keys: readonly string[], step: ItemsStep<R>): R | undefined => {
    if ('fail' in step) throw step.fail;
    if ('keep' in step) return step.keep;
    ['RUN', ...keys].forEach((key, index) => {
      const write = step.writes[index];
      if (write) items.set(index === 0 ? runPk : key, { record: write.record, meta: write.meta });
    });
    return step.answer;
  };
  let runPk = '';
  const backoffFor = (attempt: number) => random() * Math.min(1, 0.025 * 2 ** attempt);

  const itemOf = (pk: string) => items.get(pk) as Stored<never> | undefined;
  const runKeyOf = (run: number) => `RUN#r${run}`;
  for (let run = 0; run < options.runs; run++) {
    items.set(runKeyOf(run), { record: { kind: 'run', runId: `r${run}`, agent: 'agent', costMicros: 0, reservedMicros: 0 } as unknown as Record<string, unknown>, meta: {} });
    at(run / options.startsPerSecond, run, () => call(run, 1, 0));
  }

  /** Run `run`'s call `turn`, attempt `attempt` of its reservation, at the current event time. */
  function call(run: number, turn: number, attempt: number): void {
    const time = current;
    const request: FleetReserveRequest = { runId: `r${run}`, stepKey: `reserve:${turn}`, deltas: { reservedMicros: options.reservationMicros }, counters, leaseMicros: options.leaseMicros || 1 };
    runPk = runKeyOf(run);
    const keys = leaseKeys(itemOf(runPk) as Stored<RunRecord> | undefined, request, day);
    if (keys.length === 0) {
      // Within the run's lease: its own item only.
      apply([], leaseAndReserve([itemOf(runPk)], [], request, day, now));
      return afterReserve(run, turn);
    }
    // Read the counter now; the write lands a ledger latency later, on the condition that it did not change.
    const readVersion = counterVersion;
    const step = leaseAndReserve([itemOf(runPk), ...keys.map((pk) => itemOf(pk))], keys, request, day, now);
    at(time + ledgerLatency(), run, () => {
      if ('keep' in step && !(step.keep as { reserved: boolean }).reserved) {
        figures.runsStopped += 1;
        return finish(run);
      }
      if (!takeUnits(current, COUNTER_TX_WCU)) {
        figures.throttled += 1;
        return at(current + backoffFor(attempt), run, () => call(run, turn, attempt + 1));
      }
      figures.counterWrites += 1;
      const second = Math.floor(current);
      writesPerSecond.set(second, (writesPerSecond.get(second) ?? 0) + 1);
      if (counterVersion !== readVersion) {
        figures.failedConditions += 1;
        return at(current + backoffFor(attempt), run, () => call(run, turn, attempt + 1));
      }
      runPk = runKeyOf(run);
      apply(keys, step);
      counterVersion += 1;
      afterReserve(run, turn);
    });
  }

  function afterReserve(run: number, turn: number): void {
    figures.callsMade += 1;
    at(current + modelLatency(), run, () => {
      // Settled: the reservation taken off, the call's cost added (guards/reservation.ts settlement).
      const item = items.get(runKeyOf(run))!;
      const record = item.record as unknown as RunRecord;
      items.set(runKeyOf(run), { ...item, record: { ...item.record, costMicros: record.costMicros + options.costMicros, reservedMicros: (record.reservedMicros ?? 0) - options.reservationMicros } });
      figures.spentMicros += options.costMicros;
      if (turn < options.callsPerRun) call(run, turn + 1, 0);
      else finish(run);
    });
  }

  function finish(run: number): void {
    runPk = runKeyOf(run);
    const keys = leaseToReturn(items.get(runPk)?.record as RunRecord | undefined);
    if (keys.length === 0) return;
    if (!takeUnits(current, COUNTER_TX_WCU)) {
      figures.throttled += 1;
      return at(current + backoffFor(1), run, () => finish(run));
    }
    figures.counterWrites += 1;
    writesPerSecond.set(Math.floor(current), (writesPerSecond.get(Math.floor(current)) ?? 0) + 1);
    apply(keys, returnLease([itemOf(runPk), ...keys.map((pk) => itemOf(pk))], keys, `r${run}`, now));
    counterVersion += 1;
  }

  let current = 0;
  while (queue.length > 0) {
    // The earliest event next (a small heap would be faster; the queue stays in the thousands).
    let index = 0;
    for (let i = 1; i < queue.length; i++) if (queue[i]!.at < queue[index]!.at) index = i;
    const [event] = queue.splice(index, 1);
    current = event!.at;
    event!.action();
  }
  const counter = items.get(fleetKey(agentCounterPk('agent', day)).pk)?.record as { leased: number } | undefined;
  if (counter && counter.leased > Math.round(options.dollarsPerDay * 1e6)) throw new Error(`the model leased past the limit: ${counter.leased}`);
  return { ...figures, peakWritesPerSecond: Math.max(0, ...writesPerSecond.values()), limitMicros: Math.round(options.dollarsPerDay * 1e6), simulatedSeconds: Math.ceil(current) };
}

function argument(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : Number(process.argv[index + 1]);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const base = { runs: argument('runs', 1_000), callsPerRun: argument('calls', 20), dollarsPerDay: argument('dollars', 100), reservationMicros: 20_000, costMicros: 5_000, startsPerSecond: argument('rate', 100) };
  console.log(`fleet budget: ${base.runs} runs started at ${base.startsPerSecond}/s, ${base.callsPerRun} calls each (reserved $0.02, cost $0.005), one day counter item (${PARTITION_WCU_PER_SECOND} WCU/s: ${PARTITION_WCU_PER_SECOND / COUNTER_TX_WCU} transactional writes/s)`);
  for (const [name, leaseMicros] of [['per call', 0], ['lease $0.05', DEFAULT_LEASE_MICROS], ['lease $0.25', 250_000]] as const) {
    const f = runBudgetModel({ ...base, leaseMicros });
    console.log(
      `${name.padEnd(12)} $${base.dollarsPerDay}/day: ${f.counterWrites} counter writes (peak ${f.peakWritesPerSecond}/s), ` +
        `${f.throttled} throttled, ${f.failedConditions} failed conditions; ${f.callsMade} calls, ${f.runsStopped} runs stopped; spent $${(f.spentMicros / 1e6).toFixed(2)} of $${(f.limitMicros / 1e6).toFixed(2)} in ${f.simulatedSeconds} s`,
    );
  }
}
