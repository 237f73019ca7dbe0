import type { HistoryEvent } from '../local/engine/local-engine.js';
type Write = (line: string) => void;
/**
 * Live progress of an execution, one line per agent step and per retry, read from the execution's
 * history events as the engine emits them.
 */
export declare function progressPrinter(write: Write, startedAt?: number): (event: HistoryEvent) => void;
export {};
