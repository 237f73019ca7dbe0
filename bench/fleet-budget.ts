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

/** The simulated clock a counter runs on (seconds): the budget model's own queue, or the fleet model's agenda. */
export interface BudgetScheduler {
  now(): number;
  at(seconds: number, action: () => void): void;
}

export interface BudgetCounterOptions {
  readonly dollarsPerDay: number;
  /** Micro-dollars a lease takes at most (0: each call's own reservation, no chunk). */
  readonly leaseMicros: number;
  readonly reservationMicros: number;
  readonly costMicros: number;
  readonly random: () => number;
  /** A ledger call's latency, in seconds: a lease's write lands that long after its read. */
  readonly ledgerLatency: () => number;
}

/** What the counter saw: `leasedPeakMicros` the most the day's counter ever had leased out (never over `limitMicros`). */
export type BudgetCounterFigures = Omit<BudgetModelFigures, 'simulatedSeconds'> & { readonly leasedPeakMicros: number };

/**
 * One agent's fleet budget for a day, as runs reserve from it: each call a reservation by the
 * ledger's rules (lambdas/ledger/fleet-leases.ts), within the run's lease (its own item only) or
 * by a lease written to the day's counter item, under its partition's write throughput.
 */
export class FleetBudgetCounter {
  readonly #options: BudgetCounterOptions;
  readonly #clock: BudgetScheduler;
  readonly #now = new Date('2026-12-02T08:00:00.000Z');
  readonly #day = fleetDay(this.#now);
  readonly #counters;
  readonly #items = new Map<string, Stored>();
  #counterVersion = 0;
  #bucket = { tokens: PARTITION_WCU_PER_SECOND, at: 0 };
  readonly #writesPerSecond = new Map<number, number>();
  readonly #figures = { counterWrites: 0, throttled: 0, failedConditions: 0, callsMade: 0, runsStopped: 0, spentMicros: 0, leasedPeakMicros: 0 };

  constructor(options: BudgetCounterOptions, clock: BudgetScheduler) {
    this.#options = options;
    this.#clock = clock;
    this.#counters = fleetCounters('agent', { agent: { dollarsPerDay: options.dollarsPerDay } }, this.#day);
  }

  /** Reserves run `run`'s call `turn`; `then(false)` when the budget is spent (the run stops). */
  reserve(run: number, turn: number, then: (reserved: boolean) => void, attempt = 0): void {
    const runPk = this.#runPk(run);
    const request: FleetReserveRequest = { runId: `r${run}`, stepKey: `reserve:${turn}`, deltas: { reservedMicros: this.#options.reservationMicros }, counters: this.#counters, leaseMicros: this.#options.leaseMicros || 1 };
    const keys = leaseKeys(this.#item(runPk) as Stored<RunRecord> | undefined, request, this.#day);
    if (keys.length === 0) {
      // Within the run's lease: its own item only.
      this.#apply(runPk, [], leaseAndReserve([this.#item(runPk)], [], request, this.#day, this.#now));
      this.#figures.callsMade += 1;
      return then(true);
    }
    // Read the counter now; the write lands a ledger latency later, on the condition that it did not change.
    const readVersion = this.#counterVersion;
    const step = leaseAndReserve([this.#item(runPk), ...keys.map((pk) => this.#item(pk))], keys, request, this.#day, this.#now);
    this.#clock.at(this.#clock.now() + this.#options.ledgerLatency(), () => {
      if ('keep' in step && !(step.keep as { reserved: boolean }).reserved) {
        this.#figures.runsStopped += 1;
        return then(false);
      }
      if (!this.#write()) return this.#clock.at(this.#clock.now() + this.#backoff(attempt), () => this.reserve(run, turn, then, attempt + 1));
      if (this.#counterVersion !== readVersion) {
        this.#figures.failedConditions += 1;
        return this.#clock.at(this.#clock.now() + this.#backoff(attempt), () => this.reserve(run, turn, then, attempt + 1));
      }
      this.#apply(runPk, keys, step);
      this.#counterVersion += 1;
      this.#figures.callsMade += 1;
      then(true);
    });
  }

  /** Run `run`'s call answered: its reservation taken off, its cost added (guards/reservation.ts settlement). */
  settle(run: number): void {
    const item = this.#items.get(this.#runPk(run))!;
    const record = item.record as unknown as RunRecord;
    this.#items.set(this.#runPk(run), { ...item, record: { ...item.record, costMicros: record.costMicros + this.#options.costMicros, reservedMicros: (record.reservedMicros ?? 0) - this.#options.reservationMicros } });
    this.#figures.spentMicros += this.#options.costMicros;
  }

  /** Run `run` ended: what its lease did not spend goes back to the counter. */
  finish(run: number, attempt = 1): void {
    const runPk = this.#runPk(run);
    const keys = leaseToReturn(this.#items.get(runPk)?.record as RunRecord | undefined);
    if (keys.length === 0) return;
    if (!this.#write()) return this.#clock.at(this.#clock.now() + this.#backoff(attempt), () => this.finish(run, attempt + 1));
    this.#apply(runPk, keys, returnLease([this.#item(runPk), ...keys.map((pk) => this.#item(pk))], keys, `r${run}`, this.#now));
    this.#counterVersion += 1;
  }

  figures(): BudgetCounterFigures {
    return { ...this.#figures, peakWritesPerSecond: Math.max(0, ...this.#writesPerSecond.values()), limitMicros: Math.round(this.#options.dollarsPerDay * 1e6) };
  }

  #runPk(run: number): string {
    const pk = `RUN#r${run}`;
    if (!this.#items.has(pk)) this.#items.set(pk, { record: { kind: 'run', runId: `r${run}`, agent: 'agent', costMicros: 0, reservedMicros: 0 } as unknown as Record<string, unknown>, meta: {} });
    return pk;
  }

  #item(pk: string): Stored<never> | undefined {
    return this.#items.get(pk) as Stored<never> | undefined;
  }

  /** A transactional write to the counter's partition: its units taken, else throttled (a throttled write costs none). */
  #write(): boolean {
    const time = this.#clock.now();
    this.#bucket = { tokens: Math.min(PARTITION_WCU_PER_SECOND, this.#bucket.tokens + (time - this.#bucket.at) * PARTITION_WCU_PER_SECOND), at: time };
    if (this.#bucket.tokens < COUNTER_TX_WCU) {
      this.#figures.throttled += 1;
      return false;
    }
    this.#bucket.tokens -= COUNTER_TX_WCU;
    this.#figures.counterWrites += 1;
    this.#writesPerSecond.set(Math.floor(time), (this.#writesPerSecond.get(Math.floor(time)) ?? 0) + 1);
    return true;
  }

  #apply<R>(runPk: string, keys: readonly string[], step: ItemsStep<R>): void {
    if ('fail' in step) throw step.fail;
    if ('keep' in step) return;
    [runPk, ...keys].forEach((key, index) => {
      const write = step.writes[index];
      if (write) this.#items.set(key, { record: write.record, meta: write.meta });
    });
    const counter = this.#items.get(fleetKey(agentCounterPk('agent', this.#day)).pk)?.record as { leased?: number } | undefined;
    this.#figures.leasedPeakMicros = Math.max(this.#figures.leasedPeakMicros, counter?.leased ?? 0);
  }

  /** Full jitter, as the DynamoDB ledger backs off a contended write (lambdas/ledger/dynamodb-ledger.ts `backoff`). */
  #backoff(attempt: number): number {
    return this.#options.random() * Math.min(1, 0.025 * 2 ** attempt);
  }
}

/** Runs the model: every run starts at `run / startsPerSecond` and makes its calls one after the other (a model latency each). */
export function runBudgetModel(options: BudgetModelOptions): BudgetModelFigures {
  const random = seededRandom(options.seed ?? 1);
  const modelLatency = logNormal(random, { median: 2, p95: 6, max: 30 });
  const ledgerLatency = logNormal(random, { median: 0.008, p95: 0.02, max: 0.2 });
  const queue: { at: number; action: () => void }[] = [];
  let current = 0;
  const clock: BudgetScheduler = { now: () => current, at: (at, action) => void queue.push({ at, action }) };
  const counter = new FleetBudgetCounter({ ...options, random, ledgerLatency }, clock);
  const call = (run: number, turn: number): void =>
    counter.reserve(run, turn, (reserved) => {
      if (!reserved) return counter.finish(run);
      clock.at(current + modelLatency(), () => {
        counter.settle(run);
        if (turn < options.callsPerRun) call(run, turn + 1);
        else counter.finish(run);
      });
    });
  for (let run = 0; run < options.runs; run++) clock.at(run / options.startsPerSecond, () => call(run, 1));
  while (queue.length > 0) {
    // The earliest event next (a small heap would be faster; the queue stays in the thousands).
    let index = 0;
    for (let i = 1; i < queue.length; i++) if (queue[i]!.at < queue[index]!.at) index = i;
    const [event] = queue.splice(index, 1);
    current = event!.at;
    event!.action();
  }
  const { leasedPeakMicros, ...figures } = counter.figures();
  if (leasedPeakMicros > figures.limitMicros) throw new Error(`the model leased past the limit: ${leasedPeakMicros}`);
  return { ...figures, simulatedSeconds: Math.ceil(current) };
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
