import { constants } from 'node:os';

/**
 * Ctrl-C (SIGINT), `kill` / systemd / docker stop (SIGTERM) and a closed terminal (SIGHUP) all
 * mean "stop": the run is saved and can be resumed, the state directory is left whole (its lock
 * and engine.json removed, the ledger closed). Without handlers, SIGTERM and SIGHUP killed the
 * process on the spot, leaving engine.json and, during startup, a half-made ledger behind.
 */
export const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

/** The shell's convention: 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP). */
export function exitCodeOfSignal(signal: StopSignal): number {
  return 128 + constants.signals[signal];
}

/** How a line names the stop signal that came: `interrupted` for Ctrl-C, `SIGTERM received` for the others. */
export function signalCame(signal: StopSignal): string {
  return signal === 'SIGINT' ? 'interrupted' : `${signal} received`;
}

/** A signal arrived before the run started: nothing ran, nothing is left half-made. */
export class StoppedBySignal extends Error {
  override readonly name = 'StoppedBySignal';
  readonly exitCode: number;
  constructor(readonly signal: StopSignal) {
    super(`${signal} before the run started: stopped; the state directory is as it was`);
    this.exitCode = exitCodeOfSignal(signal);
  }
}

export interface StopSignals {
  /** Resolves with the first stop signal. */
  readonly received: Promise<StopSignal>;
  /** The first stop signal so far. */
  first(): StopSignal | undefined;
  /** Puts the default handlers back. */
  dispose(): void;
}

/**
 * Catches the stop signals from now on. The first is recorded (the caller stops at its next safe
 * point); a second one is not argued with: the handlers are removed and the signal raised again,
 * so the process ends the way it would have without them.
 */
export function watchStopSignals(): StopSignals {
  let first: StopSignal | undefined;
  let resolveReceived: (signal: StopSignal) => void = () => undefined;
  const received = new Promise<StopSignal>((resolve) => (resolveReceived = resolve));
  const dispose = () => {
    for (const signal of STOP_SIGNALS) process.off(signal, handle);
  };
  function handle(signal: StopSignal): void {
    if (first === undefined) {
      first = signal;
      resolveReceived(signal);
      return;
    }
    dispose();
    process.kill(process.pid, signal);
  }
  for (const signal of STOP_SIGNALS) process.on(signal, handle);
  return { received, first: () => first, dispose };
}

/** Runs every cleanup, last added first, even when one fails; then throws the first failure. */
export async function runCleanups(cleanups: (() => Promise<void> | void)[]): Promise<void> {
  const failures: unknown[] = [];
  for (const cleanup of cleanups.splice(0).reverse()) await Promise.resolve().then(cleanup).catch((error: unknown) => failures.push(error));
  if (failures.length > 0) throw failures[0];
}
