import * as z from 'zod';
import type { RunLedger } from '../ledger/ledger.js';
import type { Clock } from '../shared/ports.js';
import type { ExecutionStarter } from './recover-run.js';
export declare const HandoffInput: z.ZodObject<{
    runId: z.ZodString;
    executionArn: z.ZodString;
    events: z.ZodOptional<z.ZodNumber>;
}, z.core.$strip>;
export type HandoffResult = {
    runId: string;
    continued: true;
    from: string;
    to: string;
    events?: number;
} | {
    runId: string;
    continued: false;
    reason: string;
};
/**
 * Continue-as-new. The execution that drives a run and is near its history limit hands the run to
 * a successor with a deterministic name, and ends ("continued"). The timeline, and what a crash at
 * each point leaves:
 *
 *   A drives ─ record handoff A→S (conditional: only if A still drives) ─ StartExecution S ─ A ends
 *
 *   - before the record: A still drives; a retry (or recovery of A) hands off again from scratch.
 *   - after the record, before S starts: the run names S, which does not run. A retry of this
 *     step finds the record and starts S by name; if A died instead, recovery follows the chain
 *     (recover.ts: the successor of an ended execution is started by name) or, locally, the
 *     watchdog finds S not running and resumes the run.
 *   - after S started, before A ended: S's StartRun finds itself named in the run record and
 *     resumes; A has nothing left to do but end. A retried StartExecution is idempotent by name.
 *
 * The record is the run's `executions` chain itself (`attachExecution` with `previousArn`): S
 * follows A there, under the name `<runId>-c<position>`; that is what StartRun, recovery and the
 * reports read, so exactly one execution drives the run at any moment.
 */
export declare function createHandoff(deps: {
    ledger: RunLedger;
    starter: ExecutionStarter;
    clock: Clock;
}): (input: unknown) => Promise<HandoffResult>;
