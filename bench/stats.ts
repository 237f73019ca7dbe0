/** A sample mean with its 95% confidence interval (Student's t), as the benchmark reports it. */
export interface Estimate {
  runs: number;
  mean: number;
  sd: number;
  /** Half-width of the 95% confidence interval of the mean. */
  halfWidth: number;
  /** `halfWidth / mean`. */
  relative: number;
}

/** t(0.975, df) for df = 1 … 30; beyond, the normal 1.96 is within 2%. */
const T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.16, 2.145, 2.131, 2.12, 2.11, 2.101, 2.093, 2.086, 2.08, 2.074, 2.069, 2.064, 2.06, 2.056, 2.052, 2.048, 2.045, 2.042];

export function estimate(values: readonly number[]): Estimate {
  const runs = values.length;
  const mean = values.reduce((sum, value) => sum + value, 0) / Math.max(runs, 1);
  const sd = runs > 1 ? Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (runs - 1)) : Number.NaN;
  const t = runs > 1 ? (T975[runs - 2] ?? 1.96) : Number.NaN;
  const halfWidth = (t * sd) / Math.sqrt(runs);
  return { runs, mean, sd, halfWidth, relative: halfWidth / mean };
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

/**
 * The median of `after / before` over pairs measured side by side: how much more the second of each
 * pair costs, with the load both felt divided out pair by pair, and robust to a pair (fewer than half
 * of them) caught by a burst of load.
 */
export function pairedRatio(pairs: readonly (readonly [before: number, after: number])[]): number {
  return median(pairs.map(([before, after]) => after / before));
}

type CpuUsage = { user: number; system: number };
const threadCpuUsage = (process as NodeJS.Process & { threadCpuUsage?: (previous?: CpuUsage) => CpuUsage }).threadCpuUsage;

/**
 * CPU ms (user + system) this thread has spent, or undefined on a Node without
 * `process.threadCpuUsage` (22.19 and later have it). Unlike the process's CPU, it leaves out the
 * work of V8's background threads (concurrent marking, the optimizing compiler), which lands in
 * whichever code runs while they work, not the code that made it.
 */
export function threadCpuMs(): number | undefined {
  const used = threadCpuUsage?.call(process);
  return used && (used.user + used.system) / 1000;
}

/** Starts a main-thread CPU clock: the function it returns says the ms spent since (undefined where Node cannot say). */
export function threadCpuClock(): () => number | undefined {
  const before = threadCpuMs();
  return () => {
    const now = threadCpuMs();
    return before === undefined || now === undefined ? undefined : now - before;
  };
}

/** The background's model: N steps, each failing independently with probability p. */
export const theory = {
  /** Checkpoint after every step: only the failed step is repeated. */
  checkpoint: (n: number, p: number) => n / (1 - p),
  /** Restart from scratch on any failure: E = (1/p)·((1-p)^-N − 1) step executions. */
  restart: (n: number, p: number) => ((1 - p) ** -n - 1) / p,
};

/** The share of step executions that repeated work: (executions − N) / executions. */
export const waste = (executions: number, n: number) => (executions - n) / executions;
