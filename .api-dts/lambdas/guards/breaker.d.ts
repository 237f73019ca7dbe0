import type { AgentDefinition } from '../define.js';
import type { Clock } from '../shared/ports.js';
import type { BreakerState, BreakerStore } from '../records/breaker-state.js';
/**
 * A circuit breaker per provider, shared by every run: its state lives in the ledger table, so
 * when the model provider is down, one run's failures spare all the others the retry storm.
 *
 *   closed ──5 outage failures in 60 s──► open ──30 s──► half-open: one probe call
 *     ▲                                    ▲                    │
 *     └──────────── probe succeeds ────────┴── probe fails ─────┘
 *
 * While open, calls fail fast with `Agent.CircuitOpen`; the state machine's Retry waits out the
 * cooldown without calling the provider. Errors retrying cannot fix (auth, invalid request, spend
 * cap) are not outages: they are not counted.
 */
/** The circuit breaker of one model, shared by all runs: an outage of one model is not one of its fallback's. */
export declare function modelBreaker(spec: string): string;
/** The circuit breaker of the agent's tool backends, shared by all its runs. */
export declare const toolsBreaker: (agent: Pick<AgentDefinition, 'name'>) => string;
export interface BreakerPolicy {
    /** Outage failures within the window that open the breaker. */
    readonly failures: number;
    readonly windowMs: number;
    /** How long the breaker stays open before it lets one probe through. */
    readonly openMs: number;
    /** How long a probe holds the half-open breaker before another call may probe. */
    readonly probeLeaseMs: number;
}
/** Defaults that work for LLM endpoints: 5 failures in a 60 s window, 30 s open, one probe. */
export declare const BREAKER: BreakerPolicy;
type Admission = {
    allowed: true;
    probe: boolean;
    next?: BreakerState;
} | {
    allowed: false;
    retryAt: string;
};
export declare function admit(current: BreakerState, now: Date, policy?: BreakerPolicy): Admission;
export declare function afterCall(current: BreakerState, now: Date, probe: boolean, error: unknown, policy?: BreakerPolicy): BreakerState | undefined;
/** Runs calls to one provider through its shared breaker. */
export declare class CircuitBreaker {
    private readonly store;
    private readonly clock;
    private readonly policy;
    constructor(store: BreakerStore, clock: Clock, policy?: BreakerPolicy);
    /**
     * Runs `send` through the breaker. `loaded`: the breaker's state as the step just read it (with
     * its other records, in one round trip); then the breaker is not read again unless a save finds
     * it changed. A success while closed writes nothing, so it reads nothing either.
     */
    call<T>(name: string, send: () => Promise<T>, loaded?: {
        state?: BreakerState;
    }): Promise<T>;
    /** Whether a call would be let through now (closed, or cooled down enough to probe); changes nothing. */
    admits(name: string): Promise<boolean>;
    state(name: string): Promise<BreakerState>;
    /** Admits the call or throws `Agent.CircuitOpen`; returns whether this call is the probe. */
    private enter;
    private update;
}
export {};
