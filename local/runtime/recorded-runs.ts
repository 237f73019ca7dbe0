import type { Ledger } from '../../lambdas/ledger/ledger.js';

/**
 * The writes a run's events are derived from (lambdas/runs/events.ts): its run record, turns,
 * calls and approvals. Each names its run first: a runId, or a record or key that holds one.
 */
const EVENT_WRITES = new Set<string>([
  'createRun',
  'attachExecution',
  'recordRecovery',
  'finishRun',
  'killRun',
  'applyBudgetExtension',
  'recordTurn',
  'claimCall',
  'recordCall',
  'completeCall',
  'upsertApproval',
  'decideApproval',
  'recordFirstApproval',
] satisfies (keyof Ledger)[]);

const runIdOf = (first: unknown): string | undefined => (typeof first === 'string' ? first : typeof first === 'object' && first !== null && typeof (first as { runId?: unknown }).runId === 'string' ? (first as { runId: string }).runId : undefined);

/**
 * The local engine's ledger, telling `onRecorded` the run each write above touched once it is
 * written: the run event stream (local/services/run-events.ts) reads a followed run then, instead
 * of on its next poll. No write is added, and nothing waits on a listener; a write through another
 * process's ledger is not seen here (the poll finds it).
 */
export function recordedRuns<L extends Ledger>(ledger: L): { ledger: L; onRecorded(listener: (runId: string) => void): void } {
  const listeners: ((runId: string) => void)[] = [];
  const wrapped = new Map<PropertyKey, unknown>();
  const proxy = new Proxy(ledger, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function' || typeof property !== 'string' || !EVENT_WRITES.has(property)) return value;
      let write = wrapped.get(property);
      if (!write) {
        const method = value as (...args: unknown[]) => Promise<unknown>;
        write = (...args: unknown[]) => {
          const runId = runIdOf(args[0]);
          const written = method.apply(target, args);
          if (runId === undefined || listeners.length === 0) return written;
          // A refused write (a lost race) may still have been the other writer's: tell either way.
          const tell = () => listeners.forEach((listener) => listener(runId));
          return written.then((result) => (tell(), result), (error: unknown) => (tell(), Promise.reject(error)));
        };
        wrapped.set(property, write);
      }
      return write;
    },
  });
  return { ledger: proxy, onRecorded: (listener) => void listeners.push(listener) };
}
