import * as z from 'zod';
import { defineAgent, defineTool, withDev } from '../../lambdas/index.js';

/**
 * The agent of the run event stream's tests and benchmark: `turns` model turns of `calls` parallel
 * reads each, then done. A read of an item named in `gates` waits until the test opens its gate
 * (`openGate`), so that the calls of one turn finish in the order a test chooses.
 */
export const EVENT_FOLLOWER = { turns: 10, calls: 3 } as const;

const gates = new Map<string, { open: () => void; opened: Promise<void> }>();
function gate(item: string) {
  let entry = gates.get(item);
  if (!entry) {
    let open = () => {};
    const opened = new Promise<void>((resolve) => (open = resolve));
    gates.set(item, (entry = { open, opened }));
  }
  return entry;
}
/** Lets the gated read of `item` (e.g. `t1c1`: turn 1, call 1) finish. */
export const openGate = (item: string) => gate(item).open();
/** Opens every gate (a test's cleanup). */
export function openAllGates(): void {
  for (const { open } of gates.values()) open();
  gates.clear();
}

const agent = defineAgent({
  name: 'event-follower',
  model: 'sim:savepoint-sim-1',
  system: 'Look things up.',
  input: z.object({ gated: z.array(z.string()).default([]), turns: z.number().int().positive().default(EVENT_FOLLOWER.turns) }).strict(),
  prompt: (input) => `Look up the items. ${JSON.stringify(input)}`,
  tools: [
    defineTool({
      name: 'lookup',
      description: 'Looks an item up.',
      input: z.object({ item: z.string(), gated: z.boolean() }).strict(),
      effect: 'read',
      execute: async (args) => {
        if (args.gated) await gate(args.item).opened;
        return { found: args.item, note: 'x'.repeat(40) };
      },
    }),
  ],
});

export const eventFollower = withDev(agent, {
  policy: (request) => {
    const turns = request.messages.filter((message) => message.role === 'assistant').length;
    const content = request.messages[0]?.content ?? '';
    const text = typeof content === 'string' ? content : content.map((block) => ('text' in block ? block.text : '')).join('');
    const input = JSON.parse(/\{"gated":\[[^\]]*\],"turns":\d+\}/.exec(text)?.[0] ?? '{}') as { gated?: string[]; turns?: number };
    if (turns >= (input.turns ?? EVENT_FOLLOWER.turns)) return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
    return {
      content: Array.from({ length: EVENT_FOLLOWER.calls }, (_, index) => {
        const item = `t${turns + 1}c${index + 1}`;
        return { type: 'tool_use' as const, id: `toolu_${turns + 1}_${index + 1}`, name: 'lookup', input: { item, gated: (input.gated ?? []).includes(item) } };
      }),
      stop_reason: 'tool_use',
    };
  },
});

export default eventFollower;
