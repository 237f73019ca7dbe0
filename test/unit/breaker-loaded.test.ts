import { describe, expect, it } from 'vitest';
import { CircuitBreaker } from '../../lambdas/guards/breaker.js';
import type { BreakerState } from '../../lambdas/records/breaker-state.js';
import { countingLedger } from '../../lambdas/ledger/counting-ledger.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { TransientError } from '../../lambdas/shared/errors.js';

// A breaker state the step read with its other records (loadStep) is used instead of a read.
const clock = { now: () => new Date('2026-11-29T02:00:00.000Z') };

describe('a breaker given the state the step loaded', () => {
  it('makes no ledger call for a success while closed', async () => {
    const counting = countingLedger(EmbeddedLedger.open());
    const breaker = new CircuitBreaker(counting.ledger, clock);
    expect(await breaker.call('model', async () => 'answer', {})).toBe('answer');
    expect(counting.total()).toBe(0);
  });

  it('counts a failure with one write, and reads again only when the state changed meanwhile', async () => {
    const ledger = EmbeddedLedger.open();
    const counting = countingLedger(ledger);
    const breaker = new CircuitBreaker(counting.ledger, clock);
    const fail = async () => {
      throw new TransientError('provider down');
    };
    await expect(breaker.call('model', fail, {})).rejects.toThrow('provider down');
    expect(counting.counts()).toEqual({ saveBreaker: 1 });
    // Loaded before another run's failure was saved: the save finds a newer version and reads it.
    const stale: BreakerState = { name: 'model', state: 'closed', failures: [], trips: 0, version: 0 };
    counting.reset();
    await expect(breaker.call('model', fail, { state: stale })).rejects.toThrow('provider down');
    expect(counting.counts()).toEqual({ saveBreaker: 2, getBreaker: 1 });
    expect((await ledger.getBreaker('model'))!.failures).toHaveLength(2);
  });
});
