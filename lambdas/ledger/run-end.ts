import type { RunRecord } from '../records/ledger-records.js';
import { countCalls, spendInFlight, withKeys } from './counted-steps.js';
import type { CallsCount, RunEnd, RunEndExpected } from './ledger.js';
import { ConditionalWriteError, fail, keep, write, type Current, type Step } from './protocol.js';

/**
 * A run's end (RunLedger `finishRun`), on its run item. With `calls`, its open turn's calls are
 * counted in the same write (open-turn.ts; the storage ledger reads that turn's records first,
 * only when one is open): an ended run's counters hold every step; a killed run's model call in
 * flight is spent at its reservation (counted-steps.ts `spendInFlight`).
 *
 * With `expected`, the run ends only while it is as its caller read it (`endExpected`). An end
 * decided from an event — a stop's ExecutionStopped, a give-up's RecoverRun — may be asked for
 * again: EventBridge delivers a rule's event at least once, a copy may run while the first still
 * does, and a child's stop reaches two rules. The first end changes the run's status or its error,
 * so a copy, however late or however concurrent, writes nothing and answers `undefined`: the end's
 * time, its spans (telemetry/tracing-ledger.ts), its lease's return, once.
 *
 *   stop delivered ─► running on arn        ─► killed at t1
 *   its copy       ─► killed: not as read   ─► nothing written, undefined
 */
export function finishRun(current: Current<RunRecord>, runId: string, outcome: RunEnd, now: Date, options: { calls?: CallsCount; expected?: RunEndExpected } = {}): Step<RunRecord | undefined> {
  if (!current) return fail(new ConditionalWriteError(`finishRun: no run ${runId}`));
  const { calls, expected } = options;
  const read = current.record;
  if (expected && (read.executionArn !== expected.executionArn || read.status !== expected.status || read.error?.error !== expected.error)) return keep(undefined);
  const at = now.toISOString();
  const record = { ...read } as RunRecord & Record<string, unknown>;
  const counted = calls ? countCalls(record, current.meta.countedSteps ?? [], calls) : [];
  const meta = withKeys(current.meta, [...counted, ...(outcome.status === 'killed' ? spendInFlight(record, current.meta.countedSteps ?? []) : [])]);
  const next: RunRecord = {
    ...record,
    status: outcome.status,
    updatedAt: at,
    finishedAt: at,
    ...(outcome.stopReason !== undefined && { stopReason: outcome.stopReason }),
    ...(outcome.error !== undefined && { error: outcome.error }), ...(outcome.report !== undefined && { report: outcome.report }),
  };
  return write(next, meta, next);
}

/** The run as read: the condition of an end decided from it (`finishRun`'s `expected`). */
export function endExpected(run: Pick<RunRecord, 'executionArn' | 'status' | 'error'>): RunEndExpected {
  return { executionArn: run.executionArn, status: run.status, ...(run.error && { error: run.error.error }) };
}
