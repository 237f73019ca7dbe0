import type { Command } from 'commander';
import { z } from 'zod';
export declare const ConsoleOptions: z.ZodObject<{
    stateDir: z.ZodString;
    port: z.ZodDefault<z.ZodCoercedNumber<unknown>>;
    host: z.ZodDefault<z.ZodString>;
    agent: z.ZodOptional<z.ZodString>;
    stack: z.ZodOptional<z.ZodString>;
    region: z.ZodOptional<z.ZodString>;
}, z.core.$strict>;
/**
 * `savepoint console`: while an engine runs on the state directory, its console is the one
 * `savepoint run` serves in its process (its address is in engine.json): printed here. Otherwise
 * the console reads the state directory itself (like `status`, one read at a time: it never holds
 * the directory between reads) and serves its runs: decisions are recorded in the ledger and
 * delivered when the run resumes; nothing is started.
 */
export declare function consoleCommand(raw: Record<string, unknown>, io: {
    out: (line: string) => void;
    err: (line: string) => void;
}): Promise<void>;
/** Adds `savepoint console`, and `--console-port` to `run` and `resume`. */
export declare function registerConsoleCommand(program: Command, stateDir: () => string, io: {
    out: (line: string) => void;
    err: (line: string) => void;
}): void;
