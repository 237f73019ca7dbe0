import { afterEach, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { loadReport } from '../../lambdas/runs/report.js';
import type { ModelPolicy } from '../../lambdas/define.js';
import { startAnthropicServer } from '../../sim/wire/anthropic-server.js';
import { startBedrockServer } from '../../sim/wire/bedrock-server.js';
import type { WireServer } from '../../sim/wire/http.js';
import { startOpenAIServer } from '../../sim/wire/openai-server.js';
import { supportTriage } from '../../agents/support-triage/agent.dev.js';
import { keysSentTwice, sampleInput as inboxInput, startTriage } from '../support/triage-harness.js';
import { expiringApprovals } from '../support/manual-clock.js';
import { duplicatePayments, sampleDay, startHarness } from '../support/refund-harness.js';

/**
 * Both example agents, end to end on the synthesized definition, on each real provider adapter
 * (the official SDK) against that provider's strict local wire server answering with the agent's
 * scripted model — through a rate limit, an overload and a 5xx (retried by the state machine, each
 * side effect still once), and a spend cap (terminal: the run stops, saying what to fix).
 */
interface Provider {
  spec: string;
  start(policy: ModelPolicy): Promise<{ server: WireServer; env: Record<string, string> }>;
}

const providers: Provider[] = [
  {
    spec: 'anthropic:claude-haiku-4-5',
    start: async (policy) => {
      const server = await startAnthropicServer({ policy, apiKey: 'sk-ant-e2e', models: ['claude-haiku-4-5'] });
      return { server, env: { ANTHROPIC_API_KEY: 'sk-ant-e2e', ANTHROPIC_BASE_URL: server.url } };
    },
  },
  {
    spec: 'openai:gpt-5-mini',
    start: async (policy) => {
      const server = await startOpenAIServer({ policy, apiKey: 'sk-openai-e2e', models: ['gpt-5-mini'] });
      return { server, env: { OPENAI_API_KEY: 'sk-openai-e2e', OPENAI_BASE_URL: `${server.url}/v1` } };
    },
  },
  {
    spec: 'bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0',
    start: async (policy) => {
      const server = await startBedrockServer({ policy, region: 'us-east-1', credentials: { AKIDE2E: 'e2e-secret' }, models: ['us.anthropic.claude-haiku-4-5-20251001-v1:0'] });
      // The Bedrock client signs with the SDK's credential chain, which reads this process's
      // environment (as a Lambda function's role does): set for this test, restored after it.
      const saved = { id: process.env['AWS_ACCESS_KEY_ID'], secret: process.env['AWS_SECRET_ACCESS_KEY'] };
      process.env['AWS_ACCESS_KEY_ID'] = 'AKIDE2E';
      process.env['AWS_SECRET_ACCESS_KEY'] = 'e2e-secret';
      cleanups.push(async () => {
        restore('AWS_ACCESS_KEY_ID', saved.id);
        restore('AWS_SECRET_ACCESS_KEY', saved.secret);
      });
      return { server, env: { AWS_REGION: 'us-east-1', BEDROCK_ENDPOINT: server.url } };
    },
  },
];

const cleanups: (() => Promise<void>)[] = [];

function restore(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The transient faults every run meets first: each is retried by the state machine, none is an outage. */
function injectTransientFaults(server: WireServer): void {
  server.failNext(1, { kind: 'rate_limit' });
  server.failNext(1, { kind: 'overloaded' });
  server.failNext(1, { kind: 'server_error' });
}

describe.each(providers)('on $spec', ({ spec, start }) => {
  it('the refund reconciler finishes through a 429, an overload and a 5xx, paying each refund once', async () => {
    const { server, env } = await start(refundReconciler.dev!.policy!);
    cleanups.push(() => server.close());
    injectTransientFaults(server);
    // Its two approvals expire at their deadline, on the test's clock: nobody decides them.
    const harness = await startHarness({ modelEnv: env, ...expiringApprovals() });
    cleanups.push(() => harness.stack.close());
    const finished = await harness.run({ runId: 'e2e', input: { date: sampleDay.date }, model: spec, config: { approvalTimeoutSeconds: 1 } });
    expect(finished.status, finished.cause).toBe('SUCCEEDED');
    const report = (await loadReport(harness.stack.ledger, 'e2e', new Date(), refundReconciler))!;
    expect(report).toMatchObject({ status: 'succeeded', model: spec, inFlight: 0, summary: { requests: 25, issued: 16, skipped: 4, escalated: 2 } });
    // Three requests refused, the rest answered: one accepted request per model turn.
    expect(server.requestCount()).toBe(report.modelTurns + 3);
    expect(server.acceptedBodies()).toHaveLength(report.modelTurns);
    expect(finished.states['CallModel']!.invocations - finished.states['CallModel']!.entered).toBeGreaterThanOrEqual(3);
    expect(duplicatePayments(harness.stack)).toEqual([]);
  });

  it('the support-triage agent finishes through the same faults, sending each reply once', async () => {
    const { server, env } = await start(supportTriage.dev!.policy!);
    cleanups.push(() => server.close());
    injectTransientFaults(server);
    const harness = await startTriage({ decide: 'approve', modelEnv: env });
    cleanups.push(() => harness.stack.close());
    const finished = await harness.run({ runId: 'e2e-triage', input: inboxInput, model: spec });
    await Promise.all(harness.decisions);
    expect(finished.status, finished.cause).toBe('SUCCEEDED');
    const report = (await loadReport(harness.stack.ledger, 'e2e-triage', new Date(), supportTriage))!;
    expect(report).toMatchObject({ status: 'succeeded', model: spec, inFlight: 0 });
    expect(server.acceptedBodies()).toHaveLength(report.modelTurns);
    expect(harness.stack.world.server.sent().length).toBeGreaterThan(0);
    expect(keysSentTwice(harness.stack.world)).toEqual([]);
  });

  it('stops at a spend cap, never retried, saying what to fix', async () => {
    const { server, env } = await start(refundReconciler.dev!.policy!);
    cleanups.push(() => server.close());
    server.failNext(1, { kind: 'spend_cap' });
    const harness = await startHarness({ modelEnv: env });
    cleanups.push(() => harness.stack.close());
    const finished = await harness.run({ runId: 'capped', input: { date: sampleDay.date }, model: spec });
    expect(finished.status).toBe('FAILED');
    expect(finished.error).toBe('Agent.Terminal');
    expect(server.requestCount()).toBe(1);
    const run = (await harness.stack.ledger.getRun('capped'))!;
    expect(run).toMatchObject({ status: 'failed', steps: 0 });
    expect(run.error?.cause).toMatch(/spend|credit|quota|billing|payment/i);
  });
});
