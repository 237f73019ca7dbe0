import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { createRunEventsRoute } from '../../lambdas/adapters/run-events-http.js';
import { runFeeds, type StreamLimits } from '../../lambdas/runs/event-feed.js';
import { readRunRecords } from '../../lambdas/runs/events.js';
import type { Clock } from '../../lambdas/shared/ports.js';

/**
 * The local engine's `GET /v1/runs/{id}/events`, read from its own ledger: one poller per followed
 * run on the engine's clock (lambdas/runs/event-feed.ts), however many follow it. With `recorded`
 * (the engine's writes, local/runtime/recorded-runs.ts), a followed run is read soon after it is
 * written to (spaced by the process's CPU time and its loop's idleness, `cpuMs` and `idleMs`: a test on a manual clock gives its own);
 * the poll remains for writes from another process.
 */
export function localRunEvents(
  ledger: Pick<Ledger, 'getRun' | 'listConversation'>,
  clock: Clock,
  options: { log?: (line: string) => void; pollMs?: number; cpuMs?: () => number; idleMs?: () => number; limits?: StreamLimits; recorded?: { onRecorded(listener: (runId: string) => void): void } } = {},
) {
  const feeds = runFeeds({
    read: (runId) => readRunRecords(ledger, runId),
    clock,
    ...(options.pollMs !== undefined && { pollMs: options.pollMs }),
    ...(options.cpuMs && { cpuMs: options.cpuMs }),
    ...(options.idleMs && { idleMs: options.idleMs }),
    onError: (error) => options.log?.(`run events: reading the ledger failed, trying again: ${String(error)}`),
  });
  options.recorded?.onRecorded((runId) => feeds.wake(runId));
  return createRunEventsRoute({ feeds, clock, ...(options.limits && { limits: options.limits }) });
}
