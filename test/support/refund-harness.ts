import { readFileSync } from 'node:fs';
import { refundReconciler, startRefundWorld, type RefundWorld } from '../../agents/refund-reconciler/agent.dev.js';
import { Day } from '../../agents/refund-reconciler/domain.js';
import type { LocalStack, LocalStackOptions } from '../../local/runtime/local-stack.js';
import { startAgentHarness, type AgentHarness, type AgentHarnessOptions } from './agent-harness.js';

export const sampleDay = Day.parse(JSON.parse(readFileSync(new URL('../../agents/refund-reconciler/sample-day.json', import.meta.url), 'utf8')));
export const scheduledEvent = JSON.parse(readFileSync(new URL('../../events/scheduled-event.json', import.meta.url), 'utf8')) as Record<string, unknown>;

export type Harness = AgentHarness<RefundWorld>;

/** The refund reconciler's run input for the sample day. */
export const sampleInput = { date: sampleDay.date };

/** The whole local stack (synthesized definition, engine, dynalite in memory, simulated services) running the refund reconciler. */
export async function startHarness(options: Partial<LocalStackOptions<RefundWorld>> & Pick<AgentHarnessOptions<RefundWorld>, 'onAsked'> & { day?: Day } = {}): Promise<Harness> {
  const { day, ...rest } = options;
  // A day of its own: the provider serves it (and closes with the stack).
  const world = day && (await startRefundWorld({ day, failRate: options.failRate ?? 0, seed: options.seed ?? 1, now: () => new Date() }));
  return startAgentHarness<RefundWorld>({ agent: refundReconciler, ...(world && { ownedWorld: world }), ...rest });
}

/** Refund request ids paid more than once by the provider (must always be empty). */
export function duplicatePayments(stack: LocalStack<RefundWorld>): string[] {
  const seen = new Map<string, number>();
  for (const refund of stack.world.payments.refunds()) seen.set(refund.refundRequestId, (seen.get(refund.refundRequestId) ?? 0) + 1);
  return [...seen].filter(([, count]) => count > 1).map(([id]) => id);
}
