import { CircuitOpenError, isOutage } from '../shared/errors.js';
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
export function modelBreaker(spec: string): string {
  return `model:${spec}`;
}

/** The circuit breaker of the agent's tool backends, shared by all its runs. */
export const toolsBreaker = (agent: Pick<AgentDefinition, 'name'>) => `tools:${agent.name}`;

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
export const BREAKER: BreakerPolicy = { failures: 5, windowMs: 60_000, openMs: 30_000, probeLeaseMs: 90_000 };

const closed = (name: string): BreakerState => ({ name, state: 'closed', failures: [], trips: 0, version: 0 });

type Admission = { allowed: true; probe: boolean; next?: BreakerState } | { allowed: false; retryAt: string };

export function admit(current: BreakerState, now: Date, policy: BreakerPolicy = BREAKER): Admission {
  if (current.state === 'closed') return { allowed: true, probe: false };
  const nowIso = now.toISOString();
  const cooledDown = new Date(Date.parse(current.openedAt ?? nowIso) + policy.openMs).toISOString();
  if (current.state === 'open' && nowIso < cooledDown) return { allowed: false, retryAt: cooledDown };
  if (current.state === 'half_open' && current.probeUntil && nowIso < current.probeUntil) return { allowed: false, retryAt: current.probeUntil };
  // Cooled down (or the previous probe vanished): this call is the probe.
  const probeUntil = new Date(now.getTime() + policy.probeLeaseMs).toISOString();
  return { allowed: true, probe: true, next: { ...current, state: 'half_open', probeUntil, version: current.version + 1 } };
}

export function afterCall(current: BreakerState, now: Date, probe: boolean, error: unknown, policy: BreakerPolicy = BREAKER): BreakerState | undefined {
  const nowIso = now.toISOString();
  if (!isOutage(error)) {
    // The provider answered. A probe's answer (or a late answer while open) closes the breaker;
    // in the closed state a success changes nothing: failures count within the window regardless.
    if (current.state === 'closed') return undefined;
    return { ...current, state: 'closed', failures: [], openedAt: undefined, probeUntil: undefined, version: current.version + 1 };
  }
  const reason = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  if (probe || current.state !== 'closed') {
    return { ...current, state: 'open', openedAt: nowIso, probeUntil: undefined, trips: current.trips + 1, lastTrip: { at: nowIso, reason: `probe failed: ${reason}` }, version: current.version + 1 };
  }
  const windowStart = new Date(now.getTime() - policy.windowMs).toISOString();
  const failures = [...current.failures.filter((at) => at > windowStart), nowIso];
  if (failures.length >= policy.failures) {
    return {
      ...current,
      state: 'open',
      failures: [],
      openedAt: nowIso,
      trips: current.trips + 1,
      lastTrip: { at: nowIso, reason: `${failures.length} failures in ${policy.windowMs / 1000} s, last: ${reason}` },
      version: current.version + 1,
    };
  }
  return { ...current, failures, version: current.version + 1 };
}

/** Runs calls to one provider through its shared breaker. */
export class CircuitBreaker {
  constructor(
    private readonly store: BreakerStore,
    private readonly clock: Clock,
    private readonly policy: BreakerPolicy = BREAKER,
  ) {}

  /**
   * Runs `send` through the breaker. `loaded`: the breaker's state as the step just read it (with
   * its other records, in one round trip); then the breaker is not read again unless a save finds
   * it changed. A success while closed writes nothing, so it reads nothing either.
   */
  async call<T>(name: string, send: () => Promise<T>, loaded?: { state?: BreakerState }): Promise<T> {
    let known = loaded && (loaded.state ?? closed(name));
    // Known closed (most calls): admitted, no probe, and a success changes nothing (`admit`,
    // `afterCall`): neither is awaited, as neither would read or write.
    const closedNow = known?.state === 'closed';
    const probe = closedNow ? false : await this.enter(name, known);
    // A probe saved a new version: what was read is stale.
    if (probe) known = undefined;
    try {
      const result = await send();
      if (!closedNow) await this.update(name, (state) => afterCall(state, this.clock.now(), probe, undefined, this.policy), known);
      return result;
    } catch (error) {
      await this.update(name, (state) => afterCall(state, this.clock.now(), probe, error, this.policy), known);
      throw error;
    }
  }

  /** Whether a call would be let through now (closed, or cooled down enough to probe); changes nothing. */
  async admits(name: string): Promise<boolean> {
    return admit(await this.state(name), this.clock.now(), this.policy).allowed;
  }

  async state(name: string): Promise<BreakerState> {
    return (await this.store.getBreaker(name)) ?? closed(name);
  }

  /** Admits the call or throws `Agent.CircuitOpen`; returns whether this call is the probe. */
  private async enter(name: string, known?: BreakerState): Promise<boolean> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = (attempt === 0 && known) || (await this.state(name));
      const admission = admit(current, this.clock.now(), this.policy);
      if (!admission.allowed) throw new CircuitOpenError(`circuit ${name} is open until ${admission.retryAt}${current.lastTrip ? ` (${current.lastTrip.reason})` : ''}`);
      if (!admission.next) return false;
      if (await this.store.saveBreaker(admission.next)) return true;
      // Another call changed the breaker first (e.g. took the probe): read it again.
    }
    throw new CircuitOpenError(`circuit ${name} is contended; try again`);
  }

  private async update(name: string, change: (state: BreakerState) => BreakerState | undefined, known?: BreakerState): Promise<void> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const next = change((attempt === 0 && known) || (await this.state(name)));
      if (!next || (await this.store.saveBreaker(next))) return;
    }
  }
}
