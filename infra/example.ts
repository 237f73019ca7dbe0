import type { App } from 'aws-cdk-lib';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { fileURLToPath } from 'node:url';
import { refundReconciler } from '../agents/refund-reconciler/agent.js';
import { SavepointStack, type SavepointStackProps } from './stack.js';

/** An example agent shipped with savepoint: where its module is, and how it is deployed. */
export const EXAMPLE_AGENTS = {
  refundReconciler: fileURLToPath(new URL('../agents/refund-reconciler/agent.ts', import.meta.url)),
  supportTriage: fileURLToPath(new URL('../agents/support-triage/agent.ts', import.meta.url)),
} as const;

/**
 * The example app's stack: the refund reconciler, nightly at 02:00 UTC (it reconciles the day
 * before). Your own app adds its agents the same way (`stack.addAgent(…)`, or `new DurableAgent(…)`).
 */
export function exampleStack(app: App, options: Pick<SavepointStackProps, 'codeVersion' | 'model' | 'otherModels' | 'apiKeySecrets' | 'modelTimeout'> = {}): SavepointStack {
  const stack = new SavepointStack(app, 'Savepoint', { description: 'savepoint: durable agent runs on AWS Step Functions', ...options });
  stack.addAgent('RefundReconciler', {
    agentName: 'refund-reconciler',
    // Its env (PAYMENTS_API_URL) is checked against `environment` at synth.
    agent: refundReconciler,
    entry: EXAMPLE_AGENTS.refundReconciler,
    schedule: Schedule.cron({ hour: '2', minute: '0' }),
    environment: { PAYMENTS_API_URL: stack.parameter('PaymentsApiUrl', 'Base URL of the payments provider (refunds with Idempotency-Key).', '^https?://.+') },
    approvals: {
      approvers: stack.parameter('Approvers', 'Who is sent a signed approval link (comma-separated e-mail addresses).', '^[^,]+(,[^,]+)*$'),
      topic: true,
    },
  });
  return stack;
}
