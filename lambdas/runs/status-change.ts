import type { ExecutionRunLedger } from '../ledger/ledger.js';
import * as z from 'zod';
import { RunRequest, namedRunId } from './run-request.js';
import type { ChildWait } from '../records/ledger-records.js';
import { schemaOnFirstUse } from '../shared/on-first-use.js';

/**
 * The EventBridge event Step Functions sends when an execution's status changes
 * (events/execution-failed.json, events/execution-aborted.json): what the rules on the agent state
 * machine deliver to ExecutionStopped and RecoverRun.
 */
export const ExecutionStatusChange = schemaOnFirstUse(() =>
  z.object({
    'detail-type': z.literal('Step Functions Execution Status Change'),
    source: z.literal('aws.states'),
    time: z.string().optional(),
    detail: z.object({
      executionArn: z.string().min(1),
      /** The state machine, and the version the execution ran (none: started on the state machine itself), as DescribeExecution tells them. */
      stateMachineArn: z.string().min(1).nullish(),
      stateMachineVersionArn: z.string().min(1).nullish(),
      status: z.enum(['ABORTED', 'FAILED', 'TIMED_OUT', 'SUCCEEDED', 'RUNNING', 'PENDING_REDRIVE']),
      stopDate: z.number().nullish(),
      input: z.string().nullish(),
      error: z.string().nullish(),
      cause: z.string().nullish(),
    }),
  }),
);

export type ExecutionStatusChange = z.infer<ReturnType<typeof ExecutionStatusChange>>;

/** A child run's request (`defineAgentTool`), from its execution's input: its run id and the parent call it answers; none for another input. */
export function childRequestOf(input: string | null | undefined): { runId: string; parent: ChildWait } | undefined {
  if (!input) return undefined;
  try {
    const request = RunRequest().safeParse(JSON.parse(input));
    return request.success && request.data.parent && request.data.runId ? { runId: request.data.runId, parent: request.data.parent } : undefined;
  } catch {
    return undefined; // not a run's input
  }
}

/**
 * The run an execution drives, found without the agent's code: the run id its input names, else
 * the one StartRun noted under the execution (ledger ExecutionRunLedger). Never a Step Functions
 * call. None for an input that is not a run's, or an execution whose StartRun never ran.
 */
export async function runOfExecution(ledger: Pick<ExecutionRunLedger, 'runOfExecution'>, detail: Pick<ExecutionStatusChange['detail'], 'executionArn' | 'input'>): Promise<string | undefined> {
  if (!detail.input) return undefined;
  let event: unknown;
  try {
    event = JSON.parse(detail.input);
  } catch {
    return undefined; // not a run's input: nothing of ours
  }
  return namedRunId(event) ?? (await ledger.runOfExecution(detail.executionArn));
}
