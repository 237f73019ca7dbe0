import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { BREAKER } from '../../lambdas/guards/breaker.js';
import { modelBreaker } from '../../lambdas/guards/breaker.js';
import { startAnthropicServer } from '../../sim/wire/anthropic-server.js';
import type { WireServer } from '../../sim/wire/http.js';
import { loadReport } from '../../lambdas/runs/report.js';
import { expiringApprovals } from '../support/manual-clock.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

const KEY = 'sk-ant-engine-test';
const PRIMARY = 'anthropic:claude-haiku-4-5';

let anthropic: WireServer;
beforeAll(async () => {
  anthropic = await startAnthropicServer({ policy: refundReconciler.dev!.policy!, apiKey: KEY, models: ['claude-haiku-4-5'] });
});
afterAll(() => anthropic.close());

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

describe('a provider’s retry-after', () => {
  it('is waited out in WaitRetryAfter, for the seconds the provider asked, before CallModel calls again', async () => {
    // The wait itself is overridden to 1 ms: the test asserts the seconds the definition computed.
    // Approvals expire at their deadline on the test's clock (nobody decides them).
    harness = await startHarness({ modelEnv: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: anthropic.url }, retryAfterWaitMs: 1, ...expiringApprovals() });
    anthropic.failNext(1, { kind: 'rate_limit', retryAfterSeconds: 17 });
    const finished = await harness.run({ input: sampleInput, model: PRIMARY, config: { approvalTimeoutSeconds: 1 } });
    expect(finished.status, finished.cause).toBe('SUCCEEDED');

    // Caught once (not retried by the throttle Retry), read, waited, and called again.
    expect(finished.states['ReadRetryAfter']?.entered).toBe(1);
    expect(finished.states['WaitRetryAfter']?.entered).toBe(1);
    expect(finished.states['CallModel']?.errors).toEqual({ 'Agent.ModelRetryAfter': 1 });
    const wait = finished.history.find((event) => event.stateEnteredEventDetails?.name === 'WaitRetryAfter')!;
    expect(JSON.parse(wait.stateEnteredEventDetails!.input).throttle).toEqual({ seconds: 17 });
  });
});

describe('the fallback model', () => {
  it('answers the turns while the primary’s breaker is open, and each turn records which model answered', async () => {
    // The agent's own model is the simulator's; its fallback is Anthropic on the wire server.
    const agent = { ...refundReconciler, fallbackModel: PRIMARY };
    harness = await startHarness({
      agent,
      modelEnv: { ANTHROPIC_API_KEY: KEY, ANTHROPIC_BASE_URL: anthropic.url },
      // The primary is down for good: every call to it fails.
      modelUrl: 'http://127.0.0.1:9', // nothing listens: connection refused, an outage
      breaker: { ...BREAKER, failures: 3, windowMs: 60_000, openMs: 60_000 },
      ...expiringApprovals(),
    });
    const before = anthropic.acceptedBodies().length;
    const finished = await harness.run({ runId: 'fallback-1', input: sampleInput, config: { approvalTimeoutSeconds: 1 } });
    expect(finished.status, finished.cause).toBe('SUCCEEDED');

    const { turns } = await harness.stack.ledger.listConversation('fallback-1');
    expect(turns.length).toBeGreaterThan(3);
    expect(new Set(turns.map((turn) => turn.model))).toEqual(new Set([PRIMARY]));
    expect(anthropic.acceptedBodies().length - before).toBe(turns.length);
    // The primary failed until its breaker opened, then was never called while it stayed open.
    const breaker = await harness.stack.ledger.getBreaker(modelBreaker(refundReconciler.model));
    expect(breaker).toMatchObject({ state: 'open', trips: 1 });
    expect(finished.states['CallModel']?.errors).toEqual({ 'Agent.Transient': 3 });

    const report = await loadReport(harness.stack.ledger, 'fallback-1', new Date(), agent);
    expect(report).toMatchObject({ model: refundReconciler.model, turnsByModel: { [PRIMARY]: turns.length } });
  });
});
