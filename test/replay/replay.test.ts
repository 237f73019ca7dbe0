import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { replayRun } from '../../local/replay/index.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { recordedModel, referee } from '../../local/replay/answers.js';
import { loadRecording } from '../../local/replay/recording.js';
import { conversation, withNotes } from '../../lambdas/steps/call-model.js';
import { toolNames, toolSpecs } from '../../lambdas/define/tool.js';
import { parseModelSpec } from '../../lambdas/models/spec.js';
import type { Message } from '../../lambdas/records/messages.js';
import type { TurnRecord } from '../../lambdas/records/ledger-records.js';
import { createClient } from '../../client/ledger-client.js';
import { postDecision, startAgentHarness } from '../support/agent-harness.js';
import { sampleInput, type Harness } from '../support/refund-harness.js';

// The refund reconciler's sample day, run once on the whole local stack (approvals decided as they
// are asked for), then replayed from its ledger on this code and on changed code.
describe('savepoint replay of a refund run', () => {
  let harness: Harness;
  const runId = 'replay-day';
  beforeAll(async () => {
    harness = await startAgentHarness({
      agent: refundReconciler,
      // Approved and rejected refunds both: each is replayed by its recorded decision.
      onAsked: (approval, stack) => void postDecision(stack, approval.approvalId, { decision: approval.turn % 2 === 0 ? 'approve' : 'reject', reason: 'test' }),
    });
    const finished = await harness.run({ runId, input: sampleInput });
    expect(finished.status).toBe('SUCCEEDED');
  });
  afterAll(() => harness?.stack.close());

  it('is identical on the same code, with no model call and no provider call', async () => {
    const paid = harness.stack.world.payments.refunds().length;
    const served = harness.stack.model.requestCount();
    const result = await replayRun({ agent: refundReconciler, source: harness.stack.ledger, runId });
    expect(result.divergence, JSON.stringify(result.divergence, null, 1)).toBeUndefined();
    expect(result.identical).toBe(true);
    const recorded = await harness.stack.ledger.listConversation(runId);
    expect(result.answered.turns).toBe(recorded.turns.length);
    expect(result.answered.approvals).toBe(recorded.approvals.length);
    expect(recorded.approvals.length).toBeGreaterThan(0);
    expect(result.live).toEqual({ model: 0, tools: 0 });
    // Nothing reached the run's own model or payments provider either.
    expect(harness.stack.model.requestCount()).toBe(served);
    expect(harness.stack.world.payments.refunds().length).toBe(paid);
  });

  it("is identical from turns recorded before they kept the provider's names for its answer, and whatever id the provider gave", async () => {
    const recorded = await harness.stack.ledger.listConversation(runId);
    // Recorded now, each turn carries the id and model the simulator named its answer by.
    for (const turn of recorded.turns) expect(turn).toMatchObject({ responseId: expect.stringMatching(/^msg_/), responseModel: 'savepoint-sim-1' });
    const withTurns = (change: (turn: TurnRecord) => TurnRecord): Ledger =>
      new Proxy(harness.stack.ledger, {
        get(target, property) {
          const value = Reflect.get(target, property) as unknown;
          if (property !== 'listConversation') return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
          return async (id: string) => {
            const conversation = await target.listConversation(id);
            return { ...conversation, turns: conversation.turns.map(change) };
          };
        },
      });
    const older = withTurns(({ responseId: _id, responseModel: _model, ...turn }) => turn);
    const otherIds = withTurns((turn) => ({ ...turn, responseId: `msg_other_${turn.turn}`, responseModel: 'savepoint-sim-1-snapshot' }));
    for (const source of [older, otherIds]) {
      const result = await replayRun({ agent: refundReconciler, source, runId });
      expect(result.divergence, JSON.stringify(result.divergence, null, 1)).toBeUndefined();
      expect(result.identical).toBe(true);
      expect(result.answered.turns).toBe(recorded.turns.length);
    }
  });

  it("arms no real timer in the steps: a tool's timeout, the wall-clock watch and a lease's renewal run on the recorded clock, where none fires", async () => {
    // Timers armed by the harness's own code (lambdas/): before, three per tool call (attempt.ts, call-tool.ts keepLease).
    const armed: string[] = [];
    const real = globalThis.setTimeout;
    const spy = vi.spyOn(globalThis, 'setTimeout').mockImplementation(((...args: Parameters<typeof setTimeout>) => {
      const stack = new Error().stack ?? '';
      if (stack.includes('/lambdas/')) armed.push(stack);
      return real(...args);
    }) as typeof setTimeout);
    try {
      const result = await replayRun({ agent: refundReconciler, source: harness.stack.ledger, runId });
      expect(result.identical).toBe(true);
      expect(result.answered.toolCalls).toBeGreaterThan(10);
    } finally {
      spy.mockRestore();
    }
    expect(armed).toEqual([]);
  });

  it('names the system prompt when a one-line change to it makes the first turn diverge', async () => {
    const changed = { ...refundReconciler, system: `${refundReconciler.system}\nNever refund more than $100.` };
    const result = await replayRun({ agent: changed, source: harness.stack.ledger, runId });
    expect(result.identical).toBe(false);
    expect(result.divergence).toMatchObject({ turn: 1, what: 'model request', why: 'the system prompt changed' });
  });

  it("names the first message when the agent's prompt for its input changes", async () => {
    const changed = { ...refundReconciler, prompt: (input: Parameters<typeof refundReconciler.prompt>[0]) => `${refundReconciler.prompt(input)} Be brief.` };
    const result = await replayRun({ agent: changed, source: harness.stack.ledger, runId });
    expect(result.divergence).toMatchObject({ turn: 1, why: "the run's first message (the agent's prompt for its input) changed" });
  });

  // Negative controls: what `identical` must not let through (issue 38: a faster replay stays as strict).
  it('names the order of the tools when the same tools are offered in another order', async () => {
    const changed = { ...refundReconciler, tools: [...refundReconciler.tools].reverse() };
    const result = await replayRun({ agent: changed, source: harness.stack.ledger, runId });
    expect(result.identical).toBe(false);
    expect(result.divergence).toMatchObject({ turn: 1, what: 'model request', why: 'the tools are offered in another order' });
  });

  it('names the tool results of the turn after the first call whose result this code cuts', async () => {
    const recorded = await harness.stack.ledger.listConversation(runId);
    const first = recorded.calls.find((call) => call.name === 'get_order' && call.outcome === 'ok')!;
    // The same call answered with the same recorded result, which this code's limit then cuts: the model is shown another result.
    const changed = { ...refundReconciler, tools: refundReconciler.tools.map((tool) => (tool.name === 'get_order' ? { ...tool, maxResultTokens: 1 } : tool)) };
    const result = await replayRun({ agent: changed, source: harness.stack.ledger, runId });
    expect(result.identical).toBe(false);
    expect(result.divergence).toMatchObject({ turn: first.turn + 1, what: 'model request' });
    expect(result.divergence!.why).toMatch(/tool results and the harness's notes before turn/);
    expect(result.live).toEqual({ model: 0, tools: 0 });
  });

  it("names the agent's report when only the report changed, showing the part that differs (the run recorded its own)", async () => {
    const recorded = (await harness.stack.ledger.getRun(runId))!.report!;
    expect(recorded).toMatchObject({ issuedCents: expect.any(Number) });
    // A report that counts a cent more: every call, approval and outcome is the same.
    const changed = { ...refundReconciler, report: (calls: Parameters<NonNullable<typeof refundReconciler.report>>[0]) => ({ ...refundReconciler.report!(calls), issuedCents: Number(refundReconciler.report!(calls)['issuedCents']) + 1 }) };
    const result = await replayRun({ agent: changed, source: harness.stack.ledger, runId });
    expect(result.identical).toBe(false);
    expect(result.divergence).toMatchObject({ what: 'report', why: "the agent's report differs" });
    expect(result.divergence!.recorded).toContain(`"issuedCents":${String(recorded['issuedCents'])}`);
    expect(result.divergence!.produced).toContain(`"issuedCents":${Number(recorded['issuedCents']) + 1}`);
    // The part where they differ, not the same start twice.
    expect(result.divergence!.recorded.startsWith('…')).toBe(true);
  });

  it('notices a message changed after it was compared, when the next request sends it again', async () => {
    // Each request holds the whole conversation, and CallModel sends a turn's messages again, the
    // same objects, on every later turn: the recorded model compares a message sent again as it
    // compared it the first time, or refuses its change.
    const recording = (await loadRecording(harness.stack.ledger, runId))!;
    const { client } = recordedModel(recording, refundReconciler, referee());
    const [first, second] = recording.turns as [TurnRecord, TurnRecord];
    const request = (turn: TurnRecord, messages: Message[]) => ({ model: parseModelSpec(turn.model).model, max_tokens: recording.run.config.maxTokensPerTurn, system: refundReconciler.system, messages, tools: toolSpecs(refundReconciler) });
    const rendered = (turns: TurnRecord[], notes: readonly string[]) => {
      const messages = conversation(recording.run, turns, recording.calls, toolNames(refundReconciler));
      withNotes(messages, notes);
      return messages;
    };
    const firstMessages = rendered([], first.notes ?? []);
    await client.createMessage(request(first, firstMessages));
    const sent = firstMessages[0]!;
    const secondMessages = [sent, ...rendered([first], second.notes ?? []).slice(1)];
    const outcome = await (async () => {
      try {
        (sent as { content: unknown }).content = `${String(sent.content)} Be brief.`;
      } catch (error) {
        return `refused: ${(error as Error).name}`;
      }
      return client.createMessage(request(second, secondMessages)).then(
        () => 'taken as it was',
        (error: Error) => error.message,
      );
    })();
    expect(outcome).toMatch(/^refused: TypeError$|^replay diverged at turn 2: the run's first message/);
  });

  it('finds the first tool call whose approval rule changed', async () => {
    const recorded = await harness.stack.ledger.listConversation(runId);
    const first = recorded.approvals[0]!;
    // The tool's whole approval rule goes: its needsApproval and its aggregate (either asks a person).
    const changed = { ...refundReconciler, tools: refundReconciler.tools.map((tool) => (tool.name === first.toolName ? { ...tool, needsApproval: undefined, aggregate: undefined } : tool)) };
    const result = await replayRun({ agent: changed, source: harness.stack.ledger, runId });
    expect(result.divergence).toMatchObject({ turn: first.turn, call: first.call, what: 'tool call' });
    expect(result.divergence!.why).toMatch(/approval rule changed/);
  });

  it('is the same through the client (client.replay), on the agent the client knows', async () => {
    const client = createClient({ ledger: harness.stack.ledger, agent: refundReconciler });
    const result = await client.replay(runId);
    expect(result).toMatchObject({ runId, identical: true, live: { model: 0, tools: 0 } });
    await expect(createClient({ ledger: harness.stack.ledger }).replay(runId)).rejects.toThrow(/^agent: replay needs the code to replay on/);
  });

  it('replays a run that asked a person to extend its step budget (the RequestBudgetExtension wait), identically', async () => {
    const asked = await harness.run({ runId: 'replay-extension', input: sampleInput, config: { maxSteps: 12, onBudgetExceeded: 'ask', approvalTimeoutSeconds: 3600 } });
    expect(asked.status).toBe('SUCCEEDED');
    const recorded = await harness.stack.ledger.listConversation('replay-extension');
    const extension = recorded.approvals.find((approval) => approval.budget);
    expect(extension?.status).toMatch(/^(approved|rejected)$/);
    const result = await replayRun({ agent: refundReconciler, source: harness.stack.ledger, runId: 'replay-extension' });
    expect(result.divergence, JSON.stringify(result.divergence, null, 1)).toBeUndefined();
    expect(result.answered).toEqual({ turns: recorded.turns.length, toolCalls: recorded.calls.length, approvals: recorded.approvals.length });
  });

  it('refuses a run that is not in the ledger', async () => {
    await expect(replayRun({ agent: refundReconciler, source: harness.stack.ledger, runId: 'nope' })).rejects.toThrow(/no run nope/);
  });
});
