import * as z from 'zod';
import { handedOffTo, siblingArn, successorName } from '../guards/history.js';
import type { FleetLedger, RunLedger } from '../ledger/ledger.js';
import { returnFleetLease } from '../guards/fleet.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Clock } from '../shared/ports.js';
import type { ExecutionStarter } from './recover-run.js';
import { loadRun } from '../conversation/turns.js';
import { schemaOnFirstUse } from '../shared/on-first-use.js';

/** A state machine version's ARN (`…:stateMachine:<name>:<number>`), not the machine's nor an alias's. */
export function isVersionArn(arn: string): boolean {
  return /^arn:[^:]+:states:[^:]*:[^:]*:stateMachine:[^:]+:\d+$/.test(arn);
}

/** `stateMachine`: the context object's `$$.StateMachine.Id`, which may name the execution's version. */
export const HandoffInput = schemaOnFirstUse(() => z.object({ runId: z.string().min(1), executionArn: z.string().min(1), stateMachine: z.string().min(1).optional(), events: z.number().int().nonnegative().optional() }));

export type HandoffResult =
  | { runId: string; continued: true; from: string; to: string; events?: number }
  | { runId: string; continued: false; reason: string };

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
export function createHandoff(deps: { ledger: RunLedger & Pick<FleetLedger, 'returnFleetLease'>; starter: ExecutionStarter; clock: Clock }) {
  return async (input: unknown): Promise<HandoffResult> => {
    const { runId, executionArn, stateMachine, events } = parseOrThrow(HandoffInput(), input, 'Handoff input');
    let run = await loadRun(deps.ledger, runId);
    if (run.status !== 'running') return { runId, continued: false, reason: `the run is ${run.status}` };
    if (run.executionArn === executionArn) {
      const position = run.executions.lastIndexOf(executionArn) + 1;
      const to = siblingArn(executionArn, successorName(runId, position));
      // Another execution attached first (a recovery): it drives; the re-read below says so.
      await deps.ledger.attachExecution(runId, to, deps.clock.now(), { previousArn: executionArn });
      run = await loadRun(deps.ledger, runId);
    }
    const to = handedOffTo(run, executionArn);
    if (!to || run.executionArn !== to) return { runId, continued: false, reason: `another execution drives the run (${run.executionArn})` };
    // The successor runs this execution's version: continue-as-new is not a deploy. Where the
    // context object names the version, it is started there with no DescribeExecution (a bucket
    // refilling 15/s per account); otherwise the starter reads the version as before.
    const version = stateMachine !== undefined && isVersionArn(stateMachine) ? stateMachine : undefined;
    // The lease of its fleet budget goes back before the successor starts (which leases anew at its first call).
    await returnFleetLease(deps.ledger, run, deps.clock.now());
    await deps.starter.start(to.split(':').pop()!, JSON.stringify({ runId, input: run.input }), version ? { on: version } : { sameVersionAs: executionArn });
    return { runId, continued: true, from: executionArn, to, ...(events !== undefined && { events }) };
  };
}
