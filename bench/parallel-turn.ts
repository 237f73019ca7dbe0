/**
 * The latency of one model turn of parallel tool calls, on simulated time: a turn asks for `calls`
 * reads at once, each taking `toolLatencyMs` on the clock, and the figure is the simulated time
 * from that turn's record to the next turn's — the whole tool phase of the turn, as the user waits
 * for it. The calls run in the `ToolCalls` Map of the synthesized definition on the local engine;
 * one after another they would take `calls × toolLatencyMs`, side by side about `toolLatencyMs`.
 *
 * The clock moves only when the process is idle (nothing ran for IDLE_TURNS turns of the event
 * loop) and then straight to the earliest wake-up: the harness's own work takes no simulated time,
 * and the figure depends on neither the machine nor its load.
 */
import { z } from 'zod';
import { defineAgent, defineTool, withDev } from '../lambdas/define.js';
import { createTestEnvironment, TestClock } from '../testing/index.js';

export interface ParallelTurnFigures {
  calls: number;
  toolLatencyMs: number;
  /** Simulated ms from the turn's record to the next turn's. */
  turnMs: number;
  /** The most calls of the turn in flight at once. */
  mostInFlight: number;
}

/** Turns of the event loop with nothing new before the clock moves. */
const IDLE_TURNS = 50;

/** A TestClock whose `sleep` wakes when the process has gone idle, at the earliest wake-up first. */
class IdleClock extends TestClock {
  #waiters: { at: number; wake: () => void }[] = [];
  #polling = false;

  sleep(ms: number): Promise<void> {
    return new Promise((wake) => {
      this.#waiters.push({ at: this.now().getTime() + ms, wake });
      this.#poll();
    });
  }

  #poll(): void {
    if (this.#polling) return;
    this.#polling = true;
    let quiet = 0;
    let seen = this.#waiters.length;
    const tick = () => {
      if (this.#waiters.length !== seen) {
        seen = this.#waiters.length;
        quiet = 0;
      }
      if (++quiet < IDLE_TURNS) return void setImmediate(tick);
      const at = Math.min(...this.#waiters.map((waiter) => waiter.at));
      this.advance(Math.max(0, at - this.now().getTime()));
      const due = this.#waiters.filter((waiter) => waiter.at <= at);
      this.#waiters = this.#waiters.filter((waiter) => waiter.at > at);
      this.#polling = false;
      for (const waiter of due) waiter.wake();
      if (this.#waiters.length > 0) this.#poll();
    };
    setImmediate(tick);
  }
}

export async function parallelTurnLatency(options: { calls?: number; toolLatencyMs?: number } = {}): Promise<ParallelTurnFigures> {
  const calls = options.calls ?? 4;
  const toolLatencyMs = options.toolLatencyMs ?? 1_000;
  const clock = new IdleClock('2026-12-01T02:00:00Z');
  let inFlight = 0;
  let mostInFlight = 0;
  const agent = withDev(
    defineAgent({
      name: 'parallel-turn-bench',
      model: 'sim:savepoint-sim-1',
      system: 'Look the items up.',
      input: z.object({}).strict(),
      prompt: () => `Look up ${calls} items.`,
      tools: [
        defineTool({
          name: 'lookup',
          description: 'Looks an item up; takes a while.',
          input: z.object({ item: z.number().int() }).strict(),
          effect: 'read',
          execute: async ({ item }) => {
            inFlight += 1;
            mostInFlight = Math.max(mostInFlight, inFlight);
            await clock.sleep(toolLatencyMs);
            inFlight -= 1;
            return { item };
          },
        }),
      ],
    }),
    {
      policy: (request) => {
        const turns = request.messages.filter((message) => message.role === 'assistant').length;
        if (turns > 0) return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
        return { content: Array.from({ length: calls }, (_, index) => ({ type: 'tool_use' as const, id: `t${index + 1}`, name: 'lookup', input: { item: index + 1 } })), stop_reason: 'tool_use' };
      },
    },
  );
  const env = await createTestEnvironment({ agent, clock });
  try {
    const run = await env.run({});
    if (run.status !== 'succeeded') throw new Error(`the parallel-turn run ${run.runId} ended ${run.status}`);
    const [first, second] = await Promise.all([env.ledger.getTurn(run.runId, 1), env.ledger.getTurn(run.runId, 2)]);
    if (!first || !second) throw new Error(`the parallel-turn run ${run.runId} has no second turn`);
    return { calls, toolLatencyMs, turnMs: Date.parse(second.recordedAt) - Date.parse(first.recordedAt), mostInFlight };
  } finally {
    await env.close();
  }
}
