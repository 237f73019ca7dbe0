import * as z from 'zod';
import type { RunLedger } from '../ledger/ledger.js';
import type { RunRecord } from '../records/ledger-records.js';
import type { Clock } from '../shared/ports.js';
/** Either the budget check's stop decision, or the error a `Catch` caught. */
export declare const FinalizeInput: z.ZodUnion<readonly [z.ZodObject<{
    runId: z.ZodString;
    stop: z.ZodObject<{
        continue: z.ZodLiteral<false>;
        status: z.ZodEnum<{
            killed: "killed";
            stopped: "stopped";
            succeeded: "succeeded";
        }>;
        reason: z.ZodString;
    }, z.core.$strip>;
}, z.core.$strip>, z.ZodObject<{
    runId: z.ZodString;
    failure: z.ZodObject<{
        Error: z.ZodString;
        Cause: z.ZodOptional<z.ZodString>;
    }, z.core.$strip>;
    executionArn: z.ZodOptional<z.ZodString>;
}, z.core.$strip>]>;
export interface FinalizeResult {
    runId: string;
    status: RunRecord['status'];
    reason: string;
    steps: number;
    tokens: number;
    dollars: number;
}
/** Records how the run ended. The run record keeps the figures; the execution output is a summary. */
export declare function createFinalize(deps: {
    ledger: RunLedger;
    clock: Clock;
}): (input: unknown) => Promise<FinalizeResult>;
