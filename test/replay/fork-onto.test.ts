import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import type { MessageRequest } from '../../lambdas/records/messages.js';
import { defineTool } from '../../lambdas/define.js';
import { verifyRun } from '../../lambdas/ledger/seal.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { startAnthropicServer } from '../../sim/wire/anthropic-server.js';
import type { WireServer } from '../../sim/wire/http.js';
import { postDecision, startAgentHarness } from '../support/agent-harness.js';
import { sampleInput, type Harness } from '../support/refund-harness.js';

// Forks that change something against the parent (lambdas/runs/fork.ts): onto another version of
// the agent (under the rule a migration obeys), with an edited tool result at the fork point, on
// another model. The model requests are watched as the steps send them (`wrapModel`), so what the
// fork's first turn shows the model is checked on the request itself.
const v1 = { ...refundReconciler, version: '1' };
const chargebacks = defineTool({
  name: 'check_chargebacks',
  description: 'Lists the open chargebacks of a payment.',
  input: z.object({ paymentId: z.string() }),
  effect: 'read',
  execute: async () => ({ chargebacks: [] }),
});
/** v2 adds a read tool and declares v1 compatible. */
const v2 = { ...v1, version: '2', compatibleWith: ['1'], tools: [...v1.tools, chargebacks] };
/** v3 changes the prompt and declares nothing compatible. */
const v3 = { ...v1, version: '3', system: `${v1.system}\nNever refund more than $100.` };

describe('forks onto other code, with edits', () => {
  let harness: Harness;
  let anthropic: WireServer;
  const sent: { spec: string; request: MessageRequest }[] = [];
  beforeAll(async () => {
    anthropic = await startAnthropicServer({ policy: refundReconciler.dev!.policy!, apiKey: 'sk-ant-fork', models: ['claude-haiku-4-5'] });
    harness = await startAgentHarness({
      agent: v1,
      modelEnv: { ANTHROPIC_API_KEY: 'sk-ant-fork', ANTHROPIC_BASE_URL: anthropic.url },
      wrapModel: (client, spec) => ({ createMessage: (request, options) => (sent.push({ spec, request }), client.createMessage(request, options)) }),
      onAsked: (approval, stack) => void postDecision(stack, approval.approvalId, { decision: 'approve', reason: 'test' }),
    });
    expect((await harness.run({ runId: 'parent', input: sampleInput })).status).toBe('SUCCEEDED');
  });
  afterAll(async () => {
    await harness?.stack.close();
    await anthropic?.close();
  });

  /** Starts a fork, waits for its chain, and returns its run and the model requests it sent. */
  const fork = async (runId: string, request: Record<string, unknown>) => {
    const before = sent.length;
    const { executionArn } = harness.stack.engine.startExecution({ name: runId, input: { runId, input: sampleInput, ...request } });
    const ended = await waitForChain(harness.stack.engine, harness.stack.ledger, runId, executionArn);
    return { ended, run: (await harness.stack.ledger.getRun(runId)) as RunRecord | undefined, requests: sent.slice(before) };
  };
  /** `body` with `agent` deployed, then v1 deployed again: the other tests fork onto the parent's own code, whichever ran before. */
  const deployedWhile = async (agent: typeof v1, body: () => Promise<void>) => {
    harness.stack.deploy(agent);
    try {
      await body();
    } finally {
      harness.stack.deploy(v1);
    }
  };
  const verifies = async (...runIds: string[]) => {
    for (const runId of runIds) expect((await verifyRun(harness.stack.ledger, runId)).problems, runId).toEqual([]);
  };

  it('shows the model the edited result at the fork point, and the fork decides on it', async () => {
    const parent = await harness.stack.ledger.listConversation('parent');
    // Turn 2 looked up the first request's order; the parent then decided it at turn 3.
    const lookup = parent.calls.find((call) => call.turn === 2 && call.call === 1)!;
    expect(lookup.name).toBe('get_order');
    const edited = { error: 'order_not_found', message: 'edited for the fork' };
    const { run, requests } = await fork('fork-edited', { fork: { from: 'parent', at: 3, effects: 'dry', results: [{ call: 1, result: edited }] } });
    expect(run?.status).toBe('succeeded');
    expect(run?.forkedFrom).toEqual({ runId: 'parent', turn: 3, effects: 'dry', edited: { results: [{ turn: 2, call: 1 }] } });
    // The fork's first request carries the edited result for that call, not the recorded one.
    const shown = (requests[0]!.request.messages.at(-1)!.content as { type: string; tool_use_id?: string; content?: unknown }[]).filter((block) => block.type === 'tool_result');
    const turn2 = parent.turns.find((turn) => turn.turn === 2)!;
    const useId = (turn2.content.find((block) => block.type === 'tool_use') as { id: string }).id;
    expect(shown.find((block) => block.tool_use_id === useId)?.content).toBe(JSON.stringify(edited));
    expect(JSON.stringify(requests[0]!.request.messages)).not.toContain(lookup.result!);
    // The order it could not read is flagged for review, where the parent decided the request otherwise.
    const forked = await harness.stack.ledger.listConversation('fork-edited');
    const turn3 = (log: typeof parent) => log.calls.filter((call) => call.turn === 3).map((call) => call.name);
    expect(turn3(forked)).toContain('flag_for_review');
    expect(turn3(forked)).not.toEqual(turn3(parent));
    await verifies('parent', 'fork-edited');
  });

  it("refuses an edit of a call the last copied turn did not make, naming the field", async () => {
    const { ended, run } = await fork('fork-bad-edit', { fork: { from: 'parent', at: 3, results: [{ call: 9, result: {} }] } });
    expect(ended.status).toBe('FAILED');
    expect(ended.cause).toMatch(/fork\.results\[0\]\.call: turn 2 of the parent made \d+ tool calls, not a call 9/);
    expect(run).toBeUndefined();
  });

  it("runs the fork's own turns on another model, the copied ones staying the parent's", async () => {
    const accepted = anthropic.acceptedBodies().length;
    const { run, requests } = await fork('fork-haiku', { model: 'anthropic:claude-haiku-4-5', fork: { from: 'parent', at: 3, effects: 'dry' } });
    expect(run).toMatchObject({ status: 'succeeded', model: 'anthropic:claude-haiku-4-5', forkedFrom: { runId: 'parent', turn: 3, effects: 'dry', edited: { model: true } } });
    expect(requests.every((sent) => sent.spec === 'anthropic:claude-haiku-4-5')).toBe(true);
    const { turns } = await harness.stack.ledger.listConversation('fork-haiku');
    expect(turns.filter((turn) => turn.turn < 3).map((turn) => turn.model)).toEqual(['sim:savepoint-sim-1', 'sim:savepoint-sim-1']);
    expect(turns.filter((turn) => turn.turn >= 3).every((turn) => turn.model === 'anthropic:claude-haiku-4-5')).toBe(true);
    expect(anthropic.acceptedBodies().length - accepted).toBe(turns.length - 2);
    await verifies('fork-haiku');
  });

  it('refuses a fork onto a version that does not declare the parent compatible, except at turn 1 (nothing copied)', () =>
    deployedWhile(v3, async () => {
      const refused = await fork('fork-v3', { fork: { from: 'parent', at: 3, effects: 'dry' } });
      expect(refused.ended.status).toBe('FAILED');
      expect(refused.ended.cause).toMatch(/fork\.from: this code cannot continue run parent's first 2 turns: version 3 does not declare version 1 compatible \(it declares no compatibleWith\); or fork at turn 1/);
      expect(refused.run).toBeUndefined();
      const fresh = await fork('fork-v3-at-1', { fork: { from: 'parent', at: 1, effects: 'dry' } });
      expect(fresh.run).toMatchObject({ status: 'succeeded', agentVersion: '3', forkedFrom: { runId: 'parent', turn: 1 } });
      expect(fresh.requests[0]!.request.system).toContain('Never refund more than $100.');
    }));

  it('continues a fork on v2 with its new tool offered, and lineage that verifies on both runs', () =>
    deployedWhile(v2, async () => {
      const { run, requests } = await fork('fork-v2', { fork: { from: 'parent', at: 3 } });
      expect(run).toMatchObject({ status: 'succeeded', agentVersion: '2', forkedFrom: { runId: 'parent', turn: 3, effects: 'reuse' } });
      expect(run?.forkedFrom?.edited).toBeUndefined();
      expect(requests.length).toBeGreaterThan(0);
      for (const { request } of requests) expect(request.tools?.map((tool) => tool.name)).toContain('check_chargebacks');
      // The parent's requests never offered it.
      const parentTurns = (await harness.stack.ledger.listConversation('parent')).turns.length;
      expect(sent.slice(0, parentTurns).some(({ request }) => request.tools?.some((tool) => tool.name === 'check_chargebacks'))).toBe(false);
      expect((await harness.stack.ledger.getRun('parent'))!.forks).toContainEqual({ runId: 'fork-v2', turn: 3 });
      // The same refunds as the parent's, answered from its record: nothing paid twice.
      expect(harness.stack.world.payments.refunds().length).toBe(new Set(harness.stack.world.payments.refunds().map((refund) => refund.refundRequestId)).size);
      await verifies('parent', 'fork-v2');
    }));
});
