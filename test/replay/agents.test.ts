import { afterEach, describe, expect, it } from 'vitest';
import { supportTriage } from '../../agents/support-triage/agent.dev.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { replayRun } from '../../local/replay/index.js';
import { startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';
import { crashInjector, CrashAt } from '../../local/runtime/crash.js';
import { waitFor, wakeOnEngineEvents, wakingLedger } from '../support/agent-harness.js';
import { counterAgent } from '../support/counter-agent.js';
import { sampleInput, startTriage, type TriageHarness } from '../support/triage-harness.js';

// Replay of each example agent's finished run (the refund reconciler's is in replay.test.ts), and
// of a long run that compacted its context and handed off to new executions: identical, with no
// model call and no provider call.
let closers: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const close of closers.reverse()) await close();
  closers = [];
});

describe('replay of the example agents', () => {
  it('replays a support-triage run identically, its approved replies answered from the record', async () => {
    const harness: TriageHarness = await startTriage({ decide: 'approve' });
    closers.push(() => harness.stack.close());
    const finished = await harness.run({ runId: 'triage-replay', input: sampleInput });
    expect(finished.status).toBe('SUCCEEDED');
    const sent = harness.stack.world.server.sent().length;
    const result = await replayRun({ agent: supportTriage, source: harness.stack.ledger, runId: 'triage-replay' });
    expect(result.divergence, JSON.stringify(result.divergence)).toBeUndefined();
    expect(result.identical).toBe(true);
    expect(result.answered.toolCalls).toBeGreaterThan(0);
    expect(result.live).toEqual({ model: 0, tools: 0 });
    expect(harness.stack.world.server.sent().length).toBe(sent);
  });

  it('replays a run that compacted its context and handed off twice, identically', async () => {
    const agent = counterAgent({ calls: 40, perTurn: 1, contextWindow: 4_000, compaction: { share: 0.5, keepRecentTurns: 3 } });
    const stack: LocalStack = await startLocalStack({ agent, retryDelayMs: 1 });
    closers.push(() => stack.close());
    const { executionArn } = stack.engine.startExecution({ name: 'long', input: { runId: 'long', input: { id: 'a' }, config: { historyEventsBeforeHandoff: 120 } } });
    await waitForChain(stack.engine, stack.ledger, 'long', executionArn);
    const run = (await stack.ledger.getRun('long'))!;
    expect(run.status).toBe('succeeded');
    expect(run.executions.length).toBeGreaterThan(2);
    const { turns } = await stack.ledger.listConversation('long');
    expect(turns.some((turn) => turn.compaction)).toBe(true);

    const result = await replayRun({ agent, source: stack.ledger, runId: 'long' });
    expect(result.divergence, JSON.stringify(result.divergence)).toBeUndefined();
    expect(result.answered.turns).toBe(turns.length);
    expect(result.live.model).toBe(0);
  });

  it('replays a run that crashed twice and was recovered, compacted its context and handed off, identically', async () => {
    const agent = counterAgent({ calls: 40, perTurn: 1, contextWindow: 4_000, compaction: { share: 0.5, keepRecentTurns: 3 } });
    // A step's process dies (the Lambda runtime exits): the execution fails, RecoverRun resumes the run.
    let died = 0;
    const dies = (spec: string) => crashInjector({ at: CrashAt.parse(spec) }, () => {
      died += 1;
      throw Object.assign(new Error('the Lambda process died'), { name: 'Runtime.ExitError' });
    });
    const [first, second] = [dies('model-call:7'), dies('after-record:tick:20')];
    const stack: LocalStack = await startLocalStack({ agent, retryDelayMs: 1, decorateLedger: wakingLedger, crash: { reached: (point, tools) => (first.reached(point, tools), second.reached(point, tools)) } });
    closers.push(() => stack.close());
    stack.engine.startExecution({ name: 'crashed', input: { runId: 'crashed', input: { id: 'c' }, config: { historyEventsBeforeHandoff: 120 } } });
    const unwatch = wakeOnEngineEvents(stack.engine);
    const run = await waitFor(async () => {
      // 'failed' for a moment after each death, until RecoverRun resumes it.
      const record = await stack.ledger.getRun('crashed');
      return record?.status === 'succeeded' && record;
    }).finally(unwatch);
    expect(died).toBe(2);
    // Every step counted once, the call whose step died after recording its result too (StartRun
    // counts it on resume): else the budget notes after it are a step off, and replay diverges.
    const log = await stack.ledger.listConversation('crashed');
    expect([run.steps, run.toolCalls]).toEqual([log.turns.length + log.calls.length, log.calls.length]);
    expect(run.recovery?.attempts).toBe(2);
    expect(run.executions.length).toBeGreaterThan(3);
    const { turns } = await stack.ledger.listConversation('crashed');
    expect(turns.some((turn) => turn.compaction)).toBe(true);

    const result = await replayRun({ agent, source: stack.ledger, runId: 'crashed' });
    expect(result.divergence, JSON.stringify(result.divergence)).toBeUndefined();
    expect(result.answered.turns).toBe(turns.length);
    expect(result.live.model).toBe(0);
  });
});
