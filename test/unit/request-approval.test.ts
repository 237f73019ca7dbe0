import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineAgent, defineTool } from '../../lambdas/define.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { TurnRecord } from '../../lambdas/records/ledger-records.js';
import { createRequestApproval } from '../../lambdas/steps/request-approval.js';
import { aggregateKeyOf } from '../../lambdas/tools/aggregates.js';
import { runRecord } from '../support/records.js';

/**
 * RequestApproval of a call CallTool was refused its reservation across the agent's runs for
 * (tools/aggregates.ts): asked with the total across runs while it is over; and, when another run
 * of the same effect has reserved it as its holder in between, nobody is asked — the wait ends at
 * once and CallTool sends the call on that reservation (before, the step failed the turn).
 */
const pay = defineTool({
  name: 'pay',
  description: 'Pays an account.',
  input: z.object({ invoice: z.string(), account: z.string(), cents: z.number().int().positive() }),
  effect: 'write',
  idempotencyKeys: true,
  idempotencyKey: (args) => args.invoice,
  aggregate: { key: (args) => args.account, amount: (args) => args.cents, threshold: 50_000, currency: 'usd' },
  execute: async () => ({ paid: true }),
});
const agent = defineAgent({ name: 'payer', model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => 'p', tools: [pay] });
const now = new Date('2026-11-29T02:00:00.000Z');
const turn: TurnRecord = {
  kind: 'turn',
  runId: 'b',
  turn: 1,
  model: 'sim:savepoint-sim-1',
  content: [{ type: 'tool_use', id: 'toolu_1', name: 'pay', input: { invoice: 'inv-9', account: 'acme', cents: 30_000 } }],
  stopReason: 'tool_use',
  usage: { input_tokens: 1, output_tokens: 1 },
  costMicros: 0,
  latencyMs: 0,
  recordedAt: now.toISOString(),
};

async function stepWith(holders: { holder: string; amount: number }[]) {
  const ledger = EmbeddedLedger.open();
  await ledger.createRun(runRecord({ runId: 'b', agent: 'payer', model: 'sim:savepoint-sim-1', modelTurns: 1 }));
  await ledger.recordTurn(turn);
  for (const { holder, amount } of holders) await ledger.reserveAggregate({ key: aggregateKeyOf(agent, pay, 'acme'), holder, amount }, now);
  const told: unknown[] = [];
  const requestApproval = createRequestApproval({
    agent,
    ledger,
    clock: { now: () => now },
    callbacks: { succeed: async (token, output) => (told.push({ token, output }), true), fail: async () => true },
  });
  return { ledger, told, run: () => requestApproval({ runId: 'b', turn: 1, call: 1, taskToken: 'token-1' }) };
}

describe('RequestApproval of a call past its total across runs', () => {
  it('asks a person with the total across runs while the call is over it', async () => {
    const { ledger, told, run } = await stepWith([{ holder: 'a:1:1', amount: 30_000 }]);
    expect(await run()).toMatchObject({ status: 'pending' });
    expect(told).toEqual([]);
    expect(await ledger.getApproval('b', 1, 1)).toMatchObject({ status: 'pending', details: { totalAcrossRuns: 60_000, threshold: 50_000 } });
  });

  it('asks nobody once the effect holds its reservation (another run of it reserved it meanwhile), and ends the wait at once', async () => {
    const { ledger, told, run } = await stepWith([{ holder: 'a:1:1', amount: 30_000 }, { holder: 'payer:pay:inv-9', amount: 30_000 }]);
    expect(await run()).toEqual({ approvalId: null, status: 'not needed' });
    expect(told).toEqual([{ token: 'token-1', output: { approvalId: null, status: 'not needed' } }]);
    expect(await ledger.getApproval('b', 1, 1)).toBeUndefined();
  });
});
