import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { inputTokensOf, type MessageRequest } from '../../lambdas/records/messages.js';
import { defineAgent, defineTool } from '../../lambdas/define.js';
import { conversation, withNotes } from '../../lambdas/steps/call-model.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { CompactionOptions, LoopOptions } from '../../lambdas/define.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';
import { counterAgent, isCompactionRequest } from '../support/counter-agent.js';

let stack: LocalStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

/** Starts the run and waits for its execution to end (an engine event, no polling), then reads the run. */
async function finished(s: LocalStack, runId: string) {
  const { executionArn } = s.engine.startExecution({ name: runId, input: { runId, input: { id: 'a' } } });
  await waitForChain(s.engine, s.ledger, runId, executionArn);
  return (await s.ledger.getRun(runId))!;
}

const WINDOW = 4_000;
const IDS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
const SHARE = 0.5;

describe('context compaction', () => {
  it('keeps input tokens per turn bounded after compaction, and the ledger rebuilds exactly what was sent', async () => {
    const requests: MessageRequest[] = [];
    const agent = counterAgent({ calls: 120, perTurn: 1, contextWindow: WINDOW, compaction: { share: SHARE, keepRecentTurns: 3 }, onRequest: (r) => requests.push(structuredClone(r)) });
    // The turns the steps' conversation queries hand back, counted from outside the ledger.
    let queried = 0;
    const counting = (inner: Ledger): Ledger =>
      new Proxy(inner, {
        get: (target, property, receiver) =>
          property === 'listConversation'
            ? async (...args: Parameters<Ledger['listConversation']>) => {
                const found = await target.listConversation(...args);
                queried += found.turns.length;
                return found;
              }
            : Reflect.get(target, property, receiver),
      });
    stack = await startLocalStack({ agent, retryDelayMs: 1, decorateLedger: counting });
    const run = await finished(stack, 'compact-1');
    expect(run.status).toBe('succeeded');
    expect(run.toolCalls).toBe(120);
    const queriedBySteps = queried; // before the test's own read below

    const { turns, calls } = await stack.ledger.listConversation('compact-1');
    const compactions = turns.filter((turn) => turn.compaction);
    // A compaction reads the conversation as CallModel does: what is new since its function's last
    // read, not every turn again at each compaction of a long run (here 103 turns queried for 4
    // compactions of a 121-turn run; 272 when each compaction queried the whole conversation).
    expect(queriedBySteps, `turns queried for ${compactions.length} compactions`).toBeLessThanOrEqual(turns.length);
    const modelTurns = turns.filter((turn) => !turn.compaction);
    const inputs = modelTurns.map((turn) => inputTokensOf(turn.usage));
    console.log(`compaction: ${modelTurns.length} turns, ${compactions.length} compactions (at turns ${compactions.map((t) => t.turn).join(' ')}); input tokens per turn: ${inputs.join(' ')}`);
    expect(compactions.length).toBeGreaterThanOrEqual(2);
    // Bounded: never more than one turn past the share of the window; without compaction it grows to ~3x the window.
    const firstCompaction = compactions[0]!.turn;
    const after = modelTurns.filter((turn) => turn.turn > firstCompaction).map((turn) => inputTokensOf(turn.usage));
    expect(Math.max(...after)).toBeLessThan(SHARE * WINDOW + 200);
    // Compactions are counted like any model call: in the run's turns and tokens.
    expect(run.modelTurns).toBe(turns.length);
    expect(run.inputTokens).toBe(turns.reduce((sum, turn) => sum + inputTokensOf(turn.usage), 0));

    // Replay: the conversation rebuilt from the ledger for each model turn is what the model got.
    expect(requests.length).toBe(turns.length);
    for (const turn of modelTurns) {
      const sent = requests[turn.turn - 1]!;
      expect(isCompactionRequest(sent)).toBe(false);
      // The turns before it, then this turn's harness notes in the latest user turn, as CallModel sends them.
      const rebuilt = conversation(run, turns.filter((t) => t.turn < turn.turn), calls);
      withNotes(rebuilt, turn.notes ?? []);
      expect(rebuilt).toEqual(sent.messages);
    }
    for (const turn of compactions) expect(isCompactionRequest(requests[turn.turn - 1]!)).toBe(true);
    // A compaction is a model call like any: it keeps the id and the model the answer named (its chat span's gen_ai.response.*).
    for (const turn of compactions) expect(turn).toMatchObject({ responseId: expect.stringMatching(/^msg_/), responseModel: 'savepoint-sim-1' });
  }, 170_000);

  /**
   * An agent that pays ids 1..10, one a turn, deciding from what it sees: it pays the first id it
   * does not see paid. A summary that forgets a payment would make it pay again.
   */
  function payer(keep?: CompactionOptions['keep']) {
    const paid: number[] = [];
    const pay = defineTool({
      name: 'pay',
      description: 'Pays an id.',
      input: z.object({ id: z.number().int() }),
      effect: 'write',
      idempotencyKeys: true,
      execute: async ({ id }) => {
        paid.push(id);
        return { paid: id };
      },
    });
    const seenPaid = (request: MessageRequest): Set<number> => {
      const seen = new Set<number>();
      for (const message of request.messages) {
        // Text as the model reads it (a text block's own text, not its JSON escaping), tool calls as JSON.
        const text =
          typeof message.content === 'string'
            ? message.content
            : message.content.map((block) => (block.type === 'text' ? block.text : JSON.stringify(block))).join('\n');
        for (const match of text.matchAll(/pay \{"id":(\d+)\}|"name":"pay","input":\{"id":(\d+)\}/g)) seen.add(Number(match[1] ?? match[2]));
      }
      return seen;
    };
    const agent = defineAgent({
      name: 'payer',
      model: 'sim:savepoint-sim-1',
      system: 'Pay each id once.',
      input: z.object({ id: z.string() }),
      prompt: () => `Pay ids 1 to ${IDS.length}, each once.`,
      tools: [pay],
      budgets: { maxSteps: 60, maxTokens: 10_000_000, maxDollars: 1_000 },
      contextWindow: 1_000,
      compaction: { share: 0.25, keepRecentTurns: 1, ...(keep && { keep }) },
      dev: {
        policy: (request) => {
          // A forgetful summary: it keeps no facts (only the harness's verbatim block can).
          if (isCompactionRequest(request)) return { content: [{ type: 'text', text: 'Summary: paying ids.' }], stop_reason: 'end_turn' };
          const seen = seenPaid(request);
          const next = IDS.find((id) => !seen.has(id));
          if (next === undefined) return { content: [{ type: 'text', text: 'All paid.' }], stop_reason: 'end_turn' };
          return { content: [{ type: 'tool_use', id: `p${next}-${request.messages.length}`, name: 'pay', input: { id: next } }], stop_reason: 'tool_use' };
        },
      },
    });
    return { agent, paid };
  }

  it('repeats no write after compaction: every write is kept verbatim in the summary', async () => {
    const { agent, paid } = payer();
    stack = await startLocalStack({ agent, retryDelayMs: 1 });
    const run = await finished(stack, 'pay-1');
    const { turns } = await stack.ledger.listConversation('pay-1');
    expect(turns.filter((turn) => turn.compaction).length).toBeGreaterThanOrEqual(2);
    expect(run.status, `${run.stopReason} ${JSON.stringify(run.error)}`).toBe('succeeded');
    expect(paid).toEqual(IDS);
  }, 120_000);

  it('(control) the same agent with a compaction that keeps nothing pays an id twice', async () => {
    const { agent, paid } = payer(() => '');
    stack = await startLocalStack({ agent, retryDelayMs: 1 });
    await finished(stack, 'pay-2');
    const { turns } = await stack.ledger.listConversation('pay-2');
    expect(turns.some((turn) => turn.compaction)).toBe(true);
    expect(new Set(paid).size).toBeLessThan(paid.length);
  }, 120_000);
});

describe('context compaction while the loop detector warns', () => {
  /**
   * A poller: the same status call every turn (a loop detector that warns from the third and trips
   * only at 100), each turn adding ~260 tokens to the context, until the job reports done.
   */
  function poller(loops: LoopOptions) {
    let polls = 0;
    const status = defineTool({
      name: 'status',
      description: 'Reads a job status.',
      input: z.object({ job: z.string() }),
      effect: 'read',
      execute: async () => ({ polls: ++polls, log: 'pending '.repeat(75) }),
    });
    const polled = (request: MessageRequest): number => {
      const last = request.messages.at(-1)!;
      if (!Array.isArray(last.content)) return 0;
      const result = last.content.find((block) => block.type === 'tool_result');
      return result && result.type === 'tool_result' ? (JSON.parse(String(result.content)) as { polls: number }).polls : 0;
    };
    return defineAgent({
      name: 'poller',
      model: 'sim:savepoint-sim-1',
      system: 'Poll the job until it is done.',
      input: z.object({ id: z.string() }),
      prompt: () => 'Poll job j1 until it is done.',
      tools: [status],
      budgets: { maxSteps: 200, maxTokens: 10_000_000, maxDollars: 1_000 },
      loops,
      contextWindow: WINDOW,
      compaction: { share: SHARE, keepRecentTurns: 2 },
      dev: {
        policy: (request) => {
          if (isCompactionRequest(request)) return { content: [{ type: 'text', text: 'Summary: polling job j1.' }], stop_reason: 'end_turn' };
          if (polled(request) >= 30) return { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' };
          return { content: [{ type: 'tool_use', id: `s${polled(request) + 1}`, name: 'status', input: { job: 'j1' } }], stop_reason: 'tool_use' };
        },
      },
    });
  }

  it('compacts when the context is due though the model is warned of a loop in that turn', async () => {
    // Cycles of 2 turns at most: the polls and compactions are no cycle of the model's (the next test).
    stack = await startLocalStack({ agent: poller({ warnAt: 3, repeats: 100, window: 100, cycleLength: 2 }), retryDelayMs: 1 });
    const run = await finished(stack, 'poll-1');
    expect(run.status, `${run.stopReason} ${JSON.stringify(run.error)}`).toBe('succeeded');
    expect(run.guardEvents?.some((event) => event.guard === 'loop' && event.action === 'warned')).toBe(true);
    const { turns } = await stack.ledger.listConversation('poll-1');
    const compactions = turns.filter((turn) => turn.compaction);
    const inputs = turns.filter((turn) => !turn.compaction).map((turn) => inputTokensOf(turn.usage));
    expect(compactions.length, `input tokens per turn: ${inputs.join(' ')}`).toBeGreaterThanOrEqual(1);
    // Never more than one turn past the share of the window: without compaction it grows to ~2x the window.
    expect(Math.max(...inputs), `input tokens per turn: ${inputs.join(' ')}`).toBeLessThan(SHARE * WINDOW + 300);
  }, 60_000);

  it('does not take compactions for the model\'s turns: polls compacted every few turns are no cycle', async () => {
    // The default cycle length (8): seven polls and a compaction, again and again, were stopped as
    // `a cycle of 8 turns repeated 3 times (status → … → no tool)`.
    stack = await startLocalStack({ agent: poller({ warnAt: 3, repeats: 100, window: 100 }), retryDelayMs: 1 });
    const run = await finished(stack, 'poll-2');
    expect(run.status, `${run.stopReason}`).toBe('succeeded');
    const { turns } = await stack.ledger.listConversation('poll-2');
    expect(turns.filter((turn) => turn.compaction).length).toBeGreaterThanOrEqual(3);
    // Warned of its repeated call (as it is), never of a cycle.
    const loops = run.guardEvents?.filter((event) => event.guard === 'loop') ?? [];
    expect(loops.length).toBeGreaterThan(0);
    for (const event of loops) expect(event.reason).toMatch(/^you called status \{"job":"j1"\} \d+ times/);
  }, 60_000);
});
