import { afterEach, expect, it, vi } from 'vitest';
import { RunsApiError, runsClient } from '../../client/index.js';

/**
 * `wait` of a client that finds its serve again (`locate`: `connect({ stateDir })`) asks again while
 * no serve answers — but not forever: after a minute with no answer it throws what the last attempt
 * got (an engine that is not coming back: a one-shot `savepoint run` that ended with its run).
 * The client's pauses on a fake clock; its requests go to a port nothing listens on (refused at once).
 */
afterEach(() => vi.useRealTimers());

it('gives up after a minute with no serve answering, throwing what the last attempt got', async () => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
  let lookups = 0;
  const client = runsClient({
    base: 'http://127.0.0.1:1/v1',
    locate: () => {
      lookups += 1;
      throw new RunsApiError(503, 'stateDir: no savepoint engine serves /tmp/gone');
    },
  });
  let settled: { error: unknown } | undefined;
  void client.wait('r1').then(
    () => (settled = { error: undefined }),
    (error: unknown) => (settled = { error }),
  );
  const started = Date.now();
  while (!settled) await vi.advanceTimersByTimeAsync(500);
  expect(settled.error).toMatchObject({ name: 'RunsApiError', status: 503, message: 'stateDir: no savepoint engine serves /tmp/gone' });
  // Not at once (a restart's gap is waited through), and not much past the minute.
  expect(Date.now() - started).toBeGreaterThanOrEqual(60_000);
  expect(Date.now() - started).toBeLessThan(65_000);
  expect(lookups).toBeGreaterThan(20);
});
