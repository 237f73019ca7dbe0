import type { HistoryListener } from './local-engine.js';
/**
 * The Task events of the execution history, appended to a file as they happen. The local engine
 * keeps executions in memory: without this, what an execution did dies with its process. One JSON
 * line per event: the execution, the state, what happened (TaskScheduled is one Lambda invocation).
 *
 * The file is opened once, now: a line written later needs no new file descriptor, so a process
 * that has run out of them (thousands of idle connections on its loopback ports) still keeps every
 * event. A write that fails all the same is said (`onError`, once until writes work again) and
 * retried with the next event: never lost in silence.
 */
export declare function historyLog(file: string, options?: {
    onError?: (error: unknown) => void;
}): HistoryListener & {
    close(): void;
};
/** Lambda invocations per state, over every process that wrote the log. */
export declare function invocationsInLog(file: string): Record<string, number>;
