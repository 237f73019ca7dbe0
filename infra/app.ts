import { App } from 'aws-cdk-lib';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SavepointStack } from './stack.js';

/**
 * The example app: the refund reconciler, nightly at 02:00 UTC (it reconciles the day before).
 * Your own app adds its agents the same way (`stack.addAgent(…)`, or `new DurableAgent(…)`).
 */
const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string };
const app = new App();
const stack = new SavepointStack(app, 'Savepoint', { description: 'savepoint: durable agent runs on AWS Step Functions', codeVersion: pkg.version });
stack.addAgent('RefundReconciler', {
  agentName: 'refund-reconciler',
  entry: fileURLToPath(new URL('../agents/refund-reconciler/agent.ts', import.meta.url)),
  schedule: Schedule.cron({ hour: '2', minute: '0' }),
  environment: { PAYMENTS_API_URL: stack.parameter('PaymentsApiUrl', 'Base URL of the payments provider (refunds with Idempotency-Key).', '^https?://.+') },
});
app.synth();
