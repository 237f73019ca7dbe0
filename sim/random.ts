/**
 * A small seeded PRNG (mulberry32): the simulated outside world (sample days, injected faults)
 * must be reproducible from a seed, so a failing run can be run again exactly.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Fault injection for a simulated service: each request fails with probability `failRate`. */
export interface FaultOptions {
  /** Probability in [0, 1) that one request fails with a transient error. @default 0 */
  readonly failRate?: number;
  /** Seed of the fault sequence. @default 1 */
  readonly seed?: number;
}

/** A seeded coin for each request of a simulated service: `true` means fail this one (reproducible from the seed). */
export function faultInjector(options: FaultOptions = {}): () => boolean {
  const failRate = options.failRate ?? 0;
  if (!(failRate >= 0 && failRate < 1)) throw new RangeError(`failRate must be in [0, 1), got ${failRate}`);
  const next = seededRandom(options.seed ?? 1);
  return () => failRate > 0 && next() < failRate;
}
