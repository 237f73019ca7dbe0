import type { Timers } from '../shared/ports.js';

/** The ledger's writes this process makes, told by run once written (the local engine's: local/runtime/recorded-runs.ts). */
export interface RecordedRuns {
  onRecorded(listener: (runId: string) => void): void;
}

/** One run's writes, watched while a long-poll waits on it. */
export interface RunWatch {
  /** Resolves at the run's next write (at once for one since the last call), or once `ms` have passed on the clock. */
  next(ms: number): Promise<void>;
  /** Stops watching (the long-poll answered). */
  close(): void;
}

/**
 * The wake-ups of the runs API's long-polls (runs/runs-api.ts): a run this process writes to is
 * read again as soon as it is written, not at the poll's next tick, so a caller waiting for it to
 * need a person hears of it at once. Without `recorded` (a ledger other processes write: the
 * RunsApi function on AWS, a state directory no engine drives) the ticks alone; with it the ticks
 * stay, for the writes of other processes. One listener for every watch, added at the first.
 */
export function runWatches(recorded: RecordedRuns | undefined, timers: Timers): (runId: string) => RunWatch {
  const watching = new Map<string, Set<() => void>>();
  let listening = false;
  return (runId) => {
    if (recorded && !listening) {
      listening = true;
      recorded.onRecorded((written) => watching.get(written)?.forEach((wake) => wake()));
    }
    // A write while no `next` waits (the poll is reading the run) is kept for the next one: a
    // change written while the poll read the run before it is not left to the tick.
    let written = false;
    let woken: (() => void) | undefined;
    const wake = () => {
      written = true;
      woken?.();
    };
    const wakes = watching.get(runId) ?? new Set<() => void>();
    watching.set(runId, wakes.add(wake));
    return {
      next: (ms) =>
        new Promise<void>((resolve) => {
          const done = () => {
            woken = undefined;
            written = false;
            cancel();
            resolve();
          };
          let cancel = () => {};
          if (written) return done();
          woken = done;
          cancel = timers.after(ms, done);
        }),
      close() {
        wakes.delete(wake);
        if (wakes.size === 0) watching.delete(runId);
      },
    };
  };
}
