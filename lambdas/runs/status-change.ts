import type { AgentDefinition } from '../define.js';
import * as z from 'zod';
import { RunRequest, runRequestFromEvent } from './run-request.js';
import type { ChildWait } from '../records/ledger-records.js';

/**
 * The EventBridge event Step Functions sends when an execution's status changes
 * (events/execution-failed.json, events/execution-aborted.json): what the rules on the agent state
 * machine deliver to ExecutionStopped and RecoverRun.
 */
export const ExecutionStatusChange = z.object({
  'detail-type': z.literal('Step Functions Execution Status Change'),
  source: z.literal('aws.states'),
  time: z.string().optional(),
  detail: z.object({
    executionArn: z.string().min(1),
    status: z.enum(['ABORTED', 'FAILED', 'TIMED_OUT', 'SUCCEEDED', 'RUNNING', 'PENDING_REDRIVE']),
    stopDate: z.number().nullish(),
    input: z.string().nullish(),
    error: z.string().nullish(),
    cause: z.string().nullish(),
  }),
});

export type ExecutionStatusChange = z.infer<typeof ExecutionStatusChange>;

/** A child run's request (`defineAgentTool`), from its execution's input: its run id and the parent call it answers; none for another input. */
export function childRequestOf(input: string | null | undefined): { runId: string; parent: ChildWait } | undefined {
  if (!input) return undefined;
  try {
    const request = RunRequest.safeParse(JSON.parse(input));
    return request.success && request.data.parent && request.data.runId ? { runId: request.data.runId, parent: request.data.parent } : undefined;
  } catch {
    return undefined; // not a run's input
  }
}

/** The run an execution drives, from its input (a run request or the nightly event); none for another input. */
export function runIdOf(agent: AgentDefinition, input: string | null | undefined): string | undefined {
  if (!input) return undefined;
  try {
    return runRequestFromEvent(agent, JSON.parse(input)).runId;
  } catch {
    return undefined; // not a run's input: nothing of ours
  }
}
