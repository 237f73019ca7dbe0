import { afterEach, expect } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineAgentTool, defineTool, withDev, type AgentDefinition } from '../../lambdas/index.js';
import type { ModelPolicy } from '../../lambdas/define.js';
import type { ModelClient } from '../../lambdas/records/messages.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { turnCounts } from '../../lambdas/conversation/turns.js';
import { agentCounterPk, stackCounterPk } from '../../lambdas/records/fleet.js';
import type { ChildStack } from '../../local/runtime/children.js';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/runtime/local-stack.js';
import { wakeOnEngineEvents, wakingLedger } from './agent-harness.js';
import { settleStatusChanges } from '../../local/services/status-events.js';

/**
 * A tree of agents for tests of child runs (defineAgentTool): `root` runs `mid` as its tool
 * `ask_mid`, which runs `leaf` as `ask_leaf`; the leaf's one write (`pay`) waits for a person.
 */

/** Calls `tool` once, then ends: the policy of every agent of the tree. */
const callOnce = (tool: string, input: Record<string, unknown>): ModelPolicy => (request) =>
  request.messages.some((message) => message.role === 'assistant')
    ? { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' }
    : { content: [{ type: 'tool_use', id: 'call_1', name: tool, input }], stop_reason: 'tool_use' };

export const paid: string[] = [];
export const leaf = withDev(
  defineAgent({
    name: 'tree-leaf',
    model: 'sim:savepoint-sim-1',
    system: 'Pay the invoice.',
    input: z.object({ invoice: z.string() }).strict(),
    prompt: (input) => `Pay ${input.invoice}`,
    tools: [
      defineTool({
        name: 'pay',
        description: 'Pays an invoice.',
        input: z.object({ invoice: z.string() }).strict(),
        effect: 'write',
        idempotencyKeys: true,
        needsApproval: (args) => ({ summary: `pay ${args.invoice}` }),
        execute: async (args) => {
          paid.push(args.invoice);
          return { paid: args.invoice };
        },
      }),
    ],
  }),
  { policy: callOnce('pay', { invoice: 'inv_1' }) },
);

export const delegating = (name: string, tool: string, child: AgentDefinition, budget: { maxDollars: number; maxTokens: number }) =>
  withDev(
    defineAgent({
      name,
      model: 'sim:savepoint-sim-1',
      system: 'Delegate.',
      input: z.object({ invoice: z.string() }).strict(),
      prompt: (input) => `Have ${input.invoice} paid`,
      budgets: { maxDollars: 2, maxTokens: 200_000 },
      tools: [defineAgentTool({ name: tool, description: 'Delegates.', input: z.object({ invoice: z.string() }).strict(), agent: child, budget })],
    }),
    { policy: callOnce(tool, { invoice: 'inv_1' }) },
  );

export const mid = delegating('tree-mid', 'ask_leaf', leaf, { maxDollars: 0.5, maxTokens: 20_000 });

/** Output dear, input nearly free: a call costs about what it writes, and its bound (768 tokens) about what it may write. */
export const notePrices = { 'sim:savepoint-sim-1': { inputPerMTok: 0.01, outputPerMTok: 150, cacheWritePerMTok: 0.01, cacheReadPerMTok: 0.01 } };

/**
 * A child agent that looks `looks` times, a long note each (about 520 output tokens a call; each
 * its own, so no loop), then ends: for tests of what a child run spends (notePrices).
 */
export function lookingChild(name: string, looks: number, system = 'Look.'): AgentDefinition {
  const note = 'n'.repeat(2_000);
  const looking: ModelPolicy = (request) => {
    const turns = request.messages.filter((message) => message.role === 'assistant').length;
    return turns < looks
      ? { content: [{ type: 'tool_use', id: `look_${turns + 1}`, name: 'look', input: { note: `${turns + 1}${note}` } }], stop_reason: 'tool_use' }
      : { content: [{ type: 'text', text: 'looked' }], stop_reason: 'end_turn' };
  };
  return withDev(
    defineAgent({
      name,
      model: 'sim:savepoint-sim-1',
      system,
      input: z.object({ invoice: z.string() }).strict(),
      prompt: (input) => `Look at ${input.invoice}`,
      budgets: { maxTokensPerTurn: 768 },
      tools: [defineTool({ name: 'look', description: 'Looks.', input: z.object({ note: z.string() }).strict(), effect: 'read', execute: async () => ({ seen: true }) })],
    }),
    { policy: looking },
  );
}
export const root = delegating('tree-root', 'ask_mid', mid, { maxDollars: 1, maxTokens: 100_000 });

/**
 * The stack of `agent` (its child agents' stacks beside it), with every engine of its tree waking
 * `waitFor`; `unwatch` ends that when the test is done. On the embedded ledger unless `options` say.
 */
export async function treeStack(agent: AgentDefinition, unwatch: (() => void)[], options: Pick<LocalStackOptions, 'ledger' | 'fleetBudget' | 'prices' | 'wrapModel' | 'statusChangeDeliveries' | 'decorateLedger'> = {}): Promise<LocalStack> {
  const { decorateLedger, ...rest } = options;
  const started = await startLocalStack({ agent, retryDelayMs: 1, recovery: false, decorateLedger: decorateLedger ? (ledger) => decorateLedger(wakingLedger(ledger)) : wakingLedger, ...rest });
  const watch = (one: { engine: LocalStack['engine']; children: ReadonlyMap<string, ChildStack> }) => {
    unwatch.push(wakeOnEngineEvents(one.engine));
    for (const child of one.children.values()) watch(child);
  };
  watch(started);
  return started;
}

/**
 * The end of each test of a file that starts tree stacks, registered once in the file: the stack
 * last given to `track` is closed, the engines' watches in `unwatch` (treeStack pushes them) end,
 * and what the leaf paid is forgotten.
 */
export function treeTestCleanup(): { unwatch: (() => void)[]; track: <S extends LocalStack>(stack: S) => S } {
  const unwatch: (() => void)[] = [];
  let current: LocalStack | undefined;
  afterEach(async () => {
    const closing = current;
    current = undefined;
    await closing?.close();
    unwatch.splice(0).forEach((off) => off());
    paid.length = 0;
  });
  return { unwatch, track: (stack) => (current = stack) };
}

/**
 * A model call of the agent whose system prompt starts with `system`, its `turn`th, held: `entered`
 * once it is sent (reserved before), answered once `open` is called — as a Lambda invocation
 * outlives its execution's stop on AWS, for tests of a kill while a call is in flight.
 */
export function heldCall(system: string, turn: number) {
  let sent!: () => void;
  let answer!: () => void;
  const entered = new Promise<void>((resolve) => (sent = resolve));
  const opened = new Promise<void>((resolve) => (answer = resolve));
  const wrap = (client: ModelClient): ModelClient => ({
    createMessage: async (request, signal) => {
      const at = request.messages.filter((message) => message.role === 'assistant').length + 1;
      if (request.system?.startsWith(system) && at === turn) {
        sent();
        await opened;
      }
      return client.createMessage(request, signal);
    },
  });
  return { wrap, entered, open: () => answer() };
}

/** Until `probe` answers, paced by the event loop (what it waits for is written by an invocation whose execution is gone: no engine event wakes a waiter). */
export async function until<T>(probe: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/**
 * A parent killed with its child's model call in flight, held to its spend counted once: the child's
 * call spent at what it reserved (`atKill`: the child as read at the kill), none left open; the
 * parent carrying its own spend and its child's; every lease back; the day's counters of the stack
 * (named Savepoint) and of the parent's agent holding no run and what was spent, the child's dollars
 * once. Answers the child's spend and the parent's own.
 */
export async function expectKilledTreeCounted(stack: LocalStack, parentRun: RunRecord, childRun: RunRecord, atKill: RunRecord): Promise<{ childSpend: number; own: number }> {
  const childSpend = childRun.costMicros + (childRun.reservedMicros ?? 0);
  expect({ costMicros: childRun.costMicros, reservedMicros: childRun.reservedMicros ?? 0 }).toEqual({ costMicros: atKill.costMicros + atKill.reservedMicros!, reservedMicros: 0 });
  const own = (await stack.ledger.listConversation(parentRun.runId)).turns.map(turnCounts).reduce((sum, count) => sum + count.costMicros, 0);
  expect({ costMicros: parentRun.costMicros, reservedMicros: parentRun.reservedMicros ?? 0, childRunsOpen: parentRun.childRunsOpen ?? 0 }).toEqual({ costMicros: own + childSpend, reservedMicros: 0, childRunsOpen: 0 });
  expect([parentRun.fleetLease?.returned, childRun.fleetLease?.returned]).toEqual([true, true]);
  const day = parentRun.fleetLease!.day;
  const [stackDay, agentDay] = await Promise.all([stack.ledger.getFleetDay(stackCounterPk('Savepoint', day)), stack.ledger.getFleetDay(agentCounterPk(parentRun.agent!, day))]);
  expect({ runs: stackDay?.runs, leased: stackDay?.leased }).toEqual({ runs: 0, leased: own + childSpend });
  expect({ runs: agentDay?.runs, leased: agentDay?.leased }).toEqual({ runs: 0, leased: own });
  return { childSpend, own };
}

/**
 * Until a kill of a parent and its child (an agent of `childAgent`) has run its course: both
 * executions over, and every status change of either delivered to its handlers (the parent's
 * again last: the child's end reaches the parent's rule too).
 */
export async function killCourseRun(stack: LocalStack, childAgent: string, parentArn: string, childArn: string): Promise<void> {
  const childStack = stack.children.get(childAgent)!;
  await childStack.engine.waitForExecution(childArn);
  await stack.engine.waitForExecution(parentArn);
  for (const engine of [stack.engine, childStack.engine, stack.engine]) await settleStatusChanges(engine);
}
