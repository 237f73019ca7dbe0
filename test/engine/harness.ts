import { readFileSync } from 'node:fs';
import { Day } from '../../lambdas/agent/domain.js';
import { summarizeHistory } from '../../local/engine.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/runtime.js';
import type { ApprovalRecord } from '../../lambdas/ledger/records.js';

export const sampleDay = Day.parse(JSON.parse(readFileSync(new URL('../../events/sample-day.json', import.meta.url), 'utf8')));
export const scheduledEvent = JSON.parse(readFileSync(new URL('../../events/scheduled-event.json', import.meta.url), 'utf8')) as Record<string, unknown>;

export interface Harness {
  stack: LocalStack;
  approvals: ApprovalRecord[];
  /** Starts an execution with `input` and waits until it stops. */
  run(input: unknown, name?: string): Promise<Finished>;
}

export type Finished = Awaited<ReturnType<LocalStack['engine']['waitForExecution']>> & {
  history: ReturnType<LocalStack['engine']['getExecutionHistory']>;
  states: ReturnType<typeof summarizeHistory>;
};

/** The whole local stack (synthesized definition, engine, dynalite in memory, simulated services). */
export async function startHarness(options: Partial<LocalStackOptions> = {}): Promise<Harness> {
  const approvals: ApprovalRecord[] = [];
  const stack = await startLocalStack({
    day: sampleDay,
    retryDelayMs: 1,
    sweepEveryMs: 50,
    onApproval: (approval) => approvals.push(approval),
    ...options,
  });
  let runs = 0;
  return {
    stack,
    approvals,
    run: async (input, name = `test-${++runs}`) => {
      const { executionArn } = stack.engine.startExecution({ name, input });
      const description = await stack.engine.waitForExecution(executionArn);
      const history = stack.engine.getExecutionHistory(executionArn);
      return { ...description, history, states: summarizeHistory(history) };
    },
  };
}

/** POSTs a decision to the local approval API, the route API Gateway serves on AWS. */
export async function postDecision(stack: LocalStack, approvalId: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${stack.endpoints.approvals}/${approvalId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

/** Polls `probe` until it yields something other than undefined, null or false. */
export async function waitFor<T>(probe: () => T | Promise<T>, timeoutMs = 60_000): Promise<Exclude<T, undefined | null | false>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value as Exclude<T, undefined | null | false>;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Refund request ids paid more than once by the provider (must always be empty). */
export function duplicatePayments(stack: LocalStack): string[] {
  const seen = new Map<string, number>();
  for (const refund of stack.payments.refunds()) seen.set(refund.refundRequestId, (seen.get(refund.refundRequestId) ?? 0) + 1);
  return [...seen].filter(([, count]) => count > 1).map(([id]) => id);
}
