import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import type { AgentDefinition } from '../define.js';
import type { BlobStore, FleetLedger, RunLedger, TurnLedger } from '../ledger/ledger.js';
import { returnFleetLease } from '../guards/fleet.js';
import { agentReport } from '../runs/report.js';
import type { RunRecord } from '../records/ledger-records.js';
import { parseOrThrow } from '../shared/validation.js';
import { causeMessage, ErrorNames } from '../shared/errors.js';
import type { Clock } from '../shared/ports.js';

/** Either the budget check's stop decision, or the error a `Catch` caught. */
export const FinalizeInput = schemaOnFirstUse(() => z.union([
  z.object({
    runId: z.string().min(1),
    stop: z.object({ continue: z.literal(false), status: z.enum(['succeeded', 'stopped', 'killed']), reason: z.string() }),
  }),
  z.object({
    runId: z.string().min(1),
    failure: z.object({ Error: z.string(), Cause: z.string().optional() }),
    /** The execution that failed (every Task's payload names it). */
    executionArn: z.string().optional(),
  }),
]));

export interface FinalizeResult {
  runId: string;
  status: RunRecord['status'];
  reason: string;
  steps: number;
  tokens: number;
  dollars: number;
}

/**
 * Records how the run ended. The run record keeps the figures, and the agent's report as this code
 * makes it (replay compares another code's with it); the execution output is a summary.
 */
export function createFinalize(deps: { ledger: RunLedger & Pick<TurnLedger, 'listConversation'> & BlobStore & Pick<FleetLedger, 'returnFleetLease'>; clock: Clock; agent?: AgentDefinition }) {
  return async (input: unknown): Promise<FinalizeResult> => {
    const parsed = parseOrThrow(FinalizeInput(), input, 'Finalize input');
    const now = deps.clock.now();
    // A failure of an execution that no longer drives the run (a migration took the run to another
    // execution, whose code this one refused to continue) is not the run's: it is left as it is.
    const failedExecution = 'failure' in parsed ? parsed.executionArn : undefined;
    const current = failedExecution !== undefined ? await deps.ledger.getRun(parsed.runId).catch(unlessDamaged) : undefined;
    if (current && current.executionArn !== failedExecution) return summaryOf(current);
    const report = await reportOf(deps, parsed.runId);
    const run =
      'stop' in parsed
        ? await deps.ledger.finishRun(parsed.runId, { status: parsed.stop.status, stopReason: parsed.stop.reason, ...(report && { report }) }, now)
        : await deps.ledger.finishRun(
            parsed.runId,
            {
              status: 'failed',
              stopReason: `${parsed.failure.Error}: ${causeMessage(parsed.failure.Cause)}`,
              error: { error: parsed.failure.Error, cause: causeMessage(parsed.failure.Cause) },
              ...(report && { report }),
            },
            now,
          );
    // Its fleet budget's lease, unused part back to the day's counters (guards/fleet.ts).
    await returnFleetLease(deps.ledger, run, now);
    return summaryOf(run);
  };
}

/**
 * The agent's report of the run, when it defines one. Never in the way of the run's end: a run
 * whose records cannot be read back whole (damaged, refused) ends — its failure recorded — without
 * it (replay then compares this code's report over the recorded calls).
 */
async function reportOf(deps: Parameters<typeof createFinalize>[0], runId: string): Promise<RunRecord['report']> {
  if (!deps.agent?.report) return undefined;
  try {
    // One query: the run's partition holds its record and its calls (and, on DynamoDB, leaves the
    // run item as the basis of finishRun's conditional put: no read of its own).
    const conversation = await deps.ledger.listConversation(runId);
    const run = conversation.run ?? (await deps.ledger.getRun(runId));
    return run && (await agentReport(deps.agent, deps.ledger, run, conversation.calls));
  } catch {
    return undefined;
  }
}

/**
 * A run record that fails verification cannot say which execution drives it: the failure is then
 * recorded as this execution's (the ledger writes it from the last record it verified, or refuses
 * again, naming the damage).
 */
function unlessDamaged(error: unknown): undefined {
  if (error instanceof Error && error.name === ErrorNames.LedgerIntegrity) return undefined;
  throw error;
}

function summaryOf(run: RunRecord): FinalizeResult {
  return {
    runId: run.runId,
    status: run.status,
    reason: run.stopReason ?? '',
    steps: run.steps,
    tokens: run.inputTokens + run.outputTokens,
    dollars: run.costMicros / 1_000_000,
  };
}
