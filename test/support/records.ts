import { RunConfig, ZERO_COUNTERS, type RunRecord } from '../../lambdas/records/ledger-records.js';

/**
 * Ledger records for tests, built once: a test names only the fields its case is about, and a
 * field added to a record type is added here, not in every suite.
 */

/** When the fixtures' runs start (the refund reconciler's nightly run, the day after its input's). */
export const RUN_STARTED_AT = '2026-11-29T02:00:00.000Z';

/**
 * A running run, created at `RUN_STARTED_AT` with default budgets and no work done, driven by
 * execution `arn:<runId>`; `overrides` win over every default (counters too).
 *
 * @example
 * runRecord({ runId: 'r1', status: 'failed', steps: 40 })
 */
export function runRecord(overrides: Partial<RunRecord> = {}): RunRecord {
  const runId = overrides.runId ?? 'r';
  const executionArn = overrides.executionArn ?? `arn:${runId}`;
  return {
    kind: 'run',
    runId,
    agent: 'agent',
    input: {},
    prompt: 'p',
    model: 'm',
    config: RunConfig().parse({}),
    fingerprint: 'f',
    priceTableVersion: 'v',
    status: 'running',
    executionArn,
    executions: [executionArn],
    createdAt: RUN_STARTED_AT,
    updatedAt: RUN_STARTED_AT,
    ...ZERO_COUNTERS,
    ...overrides,
  };
}
