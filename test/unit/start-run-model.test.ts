import { describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { DEFAULT_PRICE_TABLE, priceTable } from '../../lambdas/models/prices.js';
import { createStartRun } from '../../lambdas/steps/start-run.js';

/** What the state machine passes StartRun about its definition. */
const definition = { hash: 'a1b2c3d4e5f60718' };

/** StartRun on an in-memory ledger; every execution but `live` has ended. */
function startRun(options: { defaultModel?: string; agent?: typeof refundReconciler; priceTable?: typeof DEFAULT_PRICE_TABLE } = {}) {
  const ledger = EmbeddedLedger.open();
  const step = createStartRun({
    agent: options.agent ?? refundReconciler,
    ledger,
    executions: { isRunning: async () => false, stop: async () => undefined },
    clock: { now: () => new Date('2026-11-29T02:00:00Z') },
    codeVersion: 'v1',
    ...(options.defaultModel && { defaultModel: options.defaultModel }),
    ...(options.priceTable && { priceTable: options.priceTable }),
  });
  const start = (input: { event: unknown; executionArn: string }) => step({ ...input, definition });
  return { ledger, start };
}
const input = { date: '2026-11-28' };

describe('StartRun: the run’s model', () => {
  it.each([
    ['the agent’s, by default', {}, {}, refundReconciler.model],
    ['the stack’s over the agent’s', { defaultModel: 'anthropic:claude-sonnet-4-5' }, {}, 'anthropic:claude-sonnet-4-5'],
    ['the request’s over the stack’s', { defaultModel: 'anthropic:claude-sonnet-4-5' }, { model: 'openai:gpt-5-mini' }, 'openai:gpt-5-mini'],
  ])('is %s', async (_case, options, request, expected) => {
    const { ledger, start } = startRun(options);
    await start({ event: { runId: 'r1', input, ...request }, executionArn: 'arn:e1' });
    expect(await ledger.getRun('r1')).toMatchObject({ model: expected, priceTableVersion: DEFAULT_PRICE_TABLE.version });
  });

  it('refuses a model without a price before the run exists, naming the model', async () => {
    const { ledger, start } = startRun();
    await expect(start({ event: { runId: 'r1', input, model: 'anthropic:claude-unpriced-9' }, executionArn: 'arn:e1' })).rejects.toThrow(
      /model anthropic:claude-unpriced-9 has no price in price table 2026-11-01/,
    );
    expect(await ledger.getRun('r1')).toBeUndefined();
  });

  it('refuses an agent whose fallback has no price, and prices it once the table is overridden (a new table version)', async () => {
    const agent = { ...refundReconciler, fallbackModel: 'openai:gpt-unpriced' };
    await expect(startRun({ agent }).start({ event: { runId: 'r1', input }, executionArn: 'arn:e1' })).rejects.toThrow(/model openai:gpt-unpriced has no price/);
    const table = priceTable({ 'openai:gpt-unpriced': { inputPerMTok: 1, outputPerMTok: 2, cacheWritePerMTok: 1, cacheReadPerMTok: 0.1 } });
    const { ledger, start } = startRun({ agent, priceTable: table });
    await start({ event: { runId: 'r1', input }, executionArn: 'arn:e1' });
    expect((await ledger.getRun('r1'))!.priceTableVersion).toMatch(/^2026-11-01\+[0-9a-f]{8}$/);
  });

  it('keeps the run’s model on a resume that names none, and refuses one that names another', async () => {
    const { ledger, start } = startRun();
    await start({ event: { runId: 'r1', input, model: 'anthropic:claude-haiku-4-5' }, executionArn: 'arn:e1' });
    // A resume (a new execution after the first ended) without --model is no change of code.
    expect(await start({ event: { runId: 'r1', input }, executionArn: 'arn:e2' })).toMatchObject({ action: 'resume' });
    expect((await ledger.getRun('r1'))!.model).toBe('anthropic:claude-haiku-4-5');
    await expect(start({ event: { runId: 'r1', input, model: 'openai:gpt-5-mini' }, executionArn: 'arn:e3' })).rejects.toThrow(
      /^model: run r1 runs on anthropic:claude-haiku-4-5, not openai:gpt-5-mini: start a new run id/,
    );
  });
});
