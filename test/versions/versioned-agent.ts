import { z } from 'zod';
import type { MessageRequest } from '../../lambdas/records/messages.js';
import { defineAgent, defineTool, type ModelPolicy } from '../../lambdas/define.js';

/**
 * A small scripted agent in versions, for the deploy-under-a-live-run tests: it looks an order up,
 * pays it (a write that waits for approval), and ends. Version 2 and later have another prompt and
 * a new tool (`notify`, called after paying). One scripted model serves every version (the local
 * stack starts one): it answers from what the request carries — the tools it offers — so a
 * request shows which version's code sent it.
 */
export function versionedAgent(options: {
  version: string;
  compatibleWith?: readonly string[];
  /** Every payment the provider made, by idempotency key (shared by all versions: one world). */
  payments: string[];
  /** Sees every request the scripted model gets (only the first version's model serves: one stack, one model). */
  onRequest?: (request: MessageRequest) => void;
}) {
  const lookup = defineTool({
    name: 'lookup',
    description: 'Reads an order.',
    input: z.object({ id: z.string() }),
    effect: 'read',
    execute: async ({ id }) => ({ id, amount: 5 }),
  });
  const pay = defineTool({
    name: 'pay',
    description: 'Pays an order.',
    input: z.object({ id: z.string(), amount: z.number() }),
    effect: 'write',
    idempotencyKeys: true,
    needsApproval: ({ id, amount }) => ({ summary: `pay ${amount} for ${id}` }),
    execute: async ({ id }, context) => {
      if (!options.payments.includes(context.idempotencyKey)) options.payments.push(context.idempotencyKey);
      return { paid: id };
    },
  });
  const notify = defineTool({
    name: 'notify',
    description: 'Tells the customer.',
    input: z.object({ id: z.string() }),
    effect: 'read',
    execute: async ({ id }) => ({ notified: id }),
  });
  const later = options.version !== '1';
  return defineAgent({
    name: 'versioned',
    version: options.version,
    ...(options.compatibleWith && { compatibleWith: options.compatibleWith }),
    model: 'sim:savepoint-sim-1',
    system: later ? 'You pay orders, then tell the customer.' : 'You pay orders.',
    input: z.object({ id: z.string() }),
    prompt: ({ id }) => `Pay order ${id}.`,
    tools: later ? [lookup, pay, notify] : [lookup, pay],
    dev: {
      policy: (request) => {
        options.onRequest?.(request);
        return scriptedModel(request);
      },
    },
  });
}

/** The order id a request is about (from the run's prompt). */
export function orderOf(request: MessageRequest): string {
  const first = request.messages[0]!;
  const text = typeof first.content === 'string' ? first.content : first.content.map((block) => (block.type === 'text' ? block.text : '')).join('');
  return /Pay order (\S+)\./.exec(text)?.[1] ?? '?';
}

const scriptedModel: ModelPolicy = (request) => {
  const id = orderOf(request);
  const turns = request.messages.filter((message) => message.role === 'assistant').length;
  const offers = (name: string) => (request.tools ?? []).some((tool) => tool.name === name);
  const use = (name: string, input: Record<string, unknown>): ReturnType<ModelPolicy> => ({ content: [{ type: 'tool_use', id: `${name}-${turns + 1}`, name, input }], stop_reason: 'tool_use' });
  if (turns === 0) return use('lookup', { id });
  if (turns === 1) return use('pay', { id, amount: 5 });
  if (turns === 2 && offers('notify')) return use('notify', { id });
  return { content: [{ type: 'text', text: `Paid ${id}.` }], stop_reason: 'end_turn' };
};
