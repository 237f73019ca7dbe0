/**
 * A circuit breaker's state as the ledger stores it, and the port that stores it: shared by every
 * run, saved with optimistic concurrency (the policy that moves it is guards/breaker.ts).
 */
export interface BreakerState {
    name: string;
    state: 'closed' | 'open' | 'half_open';
    /** Times of outage failures within the rolling window (ISO). */
    failures: string[];
    openedAt?: string;
    /** While half-open: the probe in flight holds the breaker until then. */
    probeUntil?: string;
    trips: number;
    lastTrip?: {
        at: string;
        reason: string;
    };
    /** Optimistic concurrency: every save is conditional on the version read. */
    version: number;
}
export interface BreakerStore {
    getBreaker(name: string): Promise<BreakerState | undefined>;
    /** Saves `next` if the stored version is still `next.version - 1`; `false` when someone else wrote first. */
    saveBreaker(next: BreakerState): Promise<boolean>;
}
