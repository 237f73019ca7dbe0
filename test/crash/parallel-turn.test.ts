import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, withDev } from '../../lambdas/index.js';
import { oneTurnPolicy, type ReadResult } from '../support/one-turn-policy.js';
import { createTestEnvironment, forEachCrashPoint, TOOL_CALL_BOUNDARIES, type TestEnvironment } from '../../testing/index.js';

/**
 * A model turn of four tool calls, which the `ToolCalls` Map runs side by side: two payments and
 * two notices, each a write with its own idempotency key. The engine is killed at every boundary
 * of each tool's first call — the other three calls in flight wherever they are at that moment —
 * and a new engine on the same ledger resumes the run: each of the four effects happens once, and
 * the model reads the four results in the order it asked for them.
 */
const CALLS = [
  { id: 'c1', name: 'pay', input: { invoice: 'inv_1', cents: 1_200 } },
  { id: 'c2', name: 'notify', input: { to: 'ana' } },
  { id: 'c3', name: 'pay', input: { invoice: 'inv_2', cents: 800 } },
  { id: 'c4', name: 'notify', input: { to: 'ben' } },
] as const;

/** The provider: the first request of an idempotency key takes effect, a repeat answers the same. */
const applied = new Map<string, string>();
const requests = new Map<string, number>();
/** The tool results of the model's second request, as it read them. */
let results: ReadResult[] = [];
let inFlight = 0;
let mostInFlight = 0;

function provider(key: string, effect: string): Promise<{ done: string }> {
  requests.set(key, (requests.get(key) ?? 0) + 1);
  if (!applied.has(key)) applied.set(key, effect);
  inFlight += 1;
  mostInFlight = Math.max(mostInFlight, inFlight);
  // An answer a few turns of the event loop later, as a service's would be: the other calls start meanwhile.
  return new Promise((resolve) =>
    setImmediate(() =>
      setImmediate(() => {
        inFlight -= 1;
        resolve({ done: applied.get(key)! });
      }),
    ),
  );
}

const agent = defineAgent({
  name: 'parallel-turn',
  model: 'sim:savepoint-sim-1',
  system: 'Pay the invoices and tell the people.',
  input: z.object({}).strict(),
  prompt: () => 'Pay inv_1 and inv_2, and tell Ana and Ben.',
  tools: [
    defineTool({
      name: 'pay',
      description: 'Pays an invoice.',
      input: z.object({ invoice: z.string(), cents: z.number().int().positive() }).strict(),
      effect: 'write',
      idempotencyKeys: true,
      execute: (args, { idempotencyKey }) => provider(idempotencyKey, `paid ${args.invoice}`),
    }),
    defineTool({
      name: 'notify',
      description: 'Tells a person.',
      input: z.object({ to: z.string() }).strict(),
      effect: 'write',
      idempotencyKeys: true,
      execute: (args, { idempotencyKey }) => provider(idempotencyKey, `told ${args.to}`),
    }),
  ],
});

const dev = withDev(agent, { policy: oneTurnPolicy(CALLS, (read) => (results = read)) });

const EFFECTS = ['paid inv_1', 'told ana', 'paid inv_2', 'told ben'];

function reset(): void {
  applied.clear();
  requests.clear();
  results = [];
  inFlight = 0;
  mostInFlight = 0;
}

/** Each call's effect once, and the results read by the model in call order, each its own call's. */
function expectEachEffectOnceInOrder(label: string): void {
  expect([...applied.values()].sort(), label).toEqual([...EFFECTS].sort());
  expect(applied.size, label).toBe(4);
  expect(results.map((result) => result.id), label).toEqual(CALLS.map((call) => call.id));
  expect(results.map((result) => (JSON.parse(result.content) as { done: string }).done), label).toEqual(EFFECTS);
}

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
  reset();
});

describe('a turn of four parallel tool calls', () => {
  it('runs the four calls at once, each once, and gives the model their results in call order', async () => {
    env = await createTestEnvironment({ agent: dev });
    const run = await env.run({});
    expect(run).toMatchObject({ execution: 'SUCCEEDED', status: 'succeeded' });
    expectEachEffectOnceInOrder('no crash');
    expect([...requests.values()]).toEqual([1, 1, 1, 1]);
    // Side by side, not one after another (the provider held each answer while the others came in).
    expect(mostInFlight).toBe(4);
  });

  it('performs each effect once and returns the results in order, with a crash at every boundary of each tool', async () => {
    const seen: string[] = [];
    const cases = await forEachCrashPoint({
      agent: dev,
      input: {},
      check: ({ tool, boundary, run }) => {
        const label = `${tool} at ${boundary}`;
        seen.push(label);
        expect(run.status, label).toBe('succeeded');
        expectEachEffectOnceInOrder(label);
        // A key is sent again only for a call the provider had answered when the engine died and
        // the ledger never heard of (this tool's at after-commit, or any other call caught in that
        // window): with the same key, so the provider answers it without a second effect.
        for (const [key, count] of requests) expect(count, `${label}: ${key}`).toBeLessThanOrEqual(2);
        reset();
      },
    });
    expect(cases).toHaveLength(2 * TOOL_CALL_BOUNDARIES.length);
    expect(seen).toEqual(['pay', 'notify'].flatMap((tool) => TOOL_CALL_BOUNDARIES.map((boundary) => `${tool} at ${boundary}`)));
  }, 300_000);
});
