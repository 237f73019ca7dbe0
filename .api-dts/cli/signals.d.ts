/**
 * Ctrl-C (SIGINT), `kill` / systemd / docker stop (SIGTERM) and a closed terminal (SIGHUP) all
 * mean "stop": the run is saved and can be resumed, the state directory is left whole (its lock
 * and engine.json removed, the ledger closed). Without handlers, SIGTERM and SIGHUP killed the
 * process on the spot, leaving engine.json and, during startup, a half-made ledger behind.
 */
export declare const STOP_SIGNALS: readonly ['SIGINT', 'SIGTERM', 'SIGHUP'];
export type StopSignal = (typeof STOP_SIGNALS)[number];
/** The shell's convention: 128 + the signal's number (130 for Ctrl-C, 143 for SIGTERM, 129 for SIGHUP). */
export declare function exitCodeOfSignal(signal: StopSignal): number;
/** A signal arrived before the run started: nothing ran, nothing is left half-made. */
export declare class StoppedBySignal extends Error {
    readonly signal: StopSignal;
    readonly name = "StoppedBySignal";
    readonly exitCode: number;
    constructor(signal: StopSignal);
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
export declare function watchStopSignals(): StopSignals;
