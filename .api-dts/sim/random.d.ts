/**
 * A small seeded PRNG (mulberry32): the simulated outside world (sample days, injected faults)
 * must be reproducible from a seed, so a failing run can be run again exactly.
 */
export declare function seededRandom(seed: number): () => number;
/** Fault injection for a simulated service: each request fails with probability `failRate`. */
export interface FaultOptions {
    /** Probability in [0, 1) that one request fails with a transient error. @default 0 */
    readonly failRate?: number;
    /** Seed of the fault sequence. @default 1 */
    readonly seed?: number;
}
export declare function faultInjector(options?: FaultOptions): () => boolean;
