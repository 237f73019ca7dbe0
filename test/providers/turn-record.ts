import { z } from 'zod';
import { defineAgent, defineTool } from '../../lambdas/define.js';
import { CircuitBreaker } from '../../lambdas/guards/breaker.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { singleModel } from '../../lambdas/models/registry.js';
import type { TurnRecord } from '../../lambdas/records/ledger-records.js';
import type { ModelClient } from '../../lambdas/records/messages.js';
import { createCallModel } from '../../lambdas/steps/call-model.js';
import { RUN_STARTED_AT, runRecord } from '../support/records.js';
import { SYSTEM } from './conversation.js';

/**
 * A run's first turn made by the real CallModel step through an adapter (`client`, speaking to its
 * strict local server) and recorded on an embedded ledger: the turn record as the ledger keeps it.
 * The agent offers the two tools of the scripted conversation (conversation.ts).
 */
export async function firstTurnRecorded(client: ModelClient, spec: string): Promise<TurnRecord> {
  const tool = (name: string, input: z.ZodObject) => defineTool({ name, description: `${name}.`, input, effect: 'read', execute: async () => ({}) });
  const agent = defineAgent({
    name: 'provider-turn',
    model: spec,
    system: SYSTEM,
    input: z.object({}),
    prompt: () => 'Reconcile order ord_1.',
    tools: [tool('lookup_order', z.object({ order_id: z.string() })), tool('issue_refund', z.object({ order_id: z.string(), amount_cents: z.number().int().min(1) }))],
  });
  const clock = { now: () => new Date(Date.parse(RUN_STARTED_AT) + 60_000) };
  const ledger = EmbeddedLedger.open();
  try {
    await ledger.createRun(runRecord({ runId: 'r', agent: agent.name, model: spec }));
    const callModel = createCallModel({ agent, fingerprint: () => 'f', ledger, clock, models: singleModel(client), breaker: new CircuitBreaker(ledger, clock) });
    await callModel({ runId: 'r' });
    const turn = await ledger.getTurn('r', 1);
    if (!turn) throw new Error('CallModel recorded no turn 1');
    return turn;
  } finally {
    ledger.close();
  }
}
