import type { AgentDefinition } from '../define.js';
import * as z from 'zod';
import { runRequestFromEvent } from './run-request.js';

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

/** The run an execution drives, from its input (a run request or the nightly event); none for another input. */
export function runIdOf(agent: AgentDefinition, input: string | null | undefined): string | undefined {
  if (!input) return undefined;
  try {
    return runRequestFromEvent(agent, JSON.parse(input)).runId;
  } catch {
    return undefined; // not a run's input: nothing of ours
  }
}
