import { afterEach, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { decide } from '../../agents/refund-reconciler/sim/policy.js';
import { HttpMessagesClient } from '../../lambdas/models/messages-client.js';
import type { MessageRequest, MessageResponse } from '../../lambdas/records/messages.js';
import { toolSpecs } from '../../lambdas/define.js';
import { startModelServer, type ModelServer } from '../../sim/model-server.js';

const SYSTEM = 'You reconcile refund requests.';
let server: ModelServer | undefined;
afterEach(async () => server?.close());

/** Two turns of the reconciler: the second request is the first, its answer and the tool's result. */
async function twoTurns(client: HttpMessagesClient): Promise<[MessageResponse, MessageResponse]> {
  const first: MessageRequest = { model: 'savepoint-sim-1', max_tokens: 1024, system: SYSTEM, messages: [{ role: 'user', content: 'Reconcile the refund requests of 2026-11-28.' }], tools: toolSpecs(refundReconciler) };
  const answer = await client.createMessage(first);
  const use = answer.content.find((block) => block.type === 'tool_use')!;
  const second: MessageRequest = {
    ...first,
    messages: [...first.messages, { role: 'assistant', content: answer.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '[]' }] }],
  };
  return [answer, await client.createMessage(second)];
}

const total = (u: MessageResponse['usage']) => u.input_tokens + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);

describe('the simulated model’s prompt cache', () => {
  it('writes the prefix up to the last breakpoint, and the next turn reads it back', async () => {
    server = await startModelServer({ policy: decide, minCacheableTokens: 200 });
    const [first, second] = await twoTurns(new HttpMessagesClient({ baseUrl: server.url, apiKey: 'k' }));
    expect(first.usage.cache_read_input_tokens).toBe(0);
    expect(first.usage.cache_creation_input_tokens).toBe(total(first.usage)); // everything up to the last block
    // Turn 2 reads all of turn 1's prompt and writes only what is new.
    expect(second.usage.cache_read_input_tokens).toBe(first.usage.cache_creation_input_tokens);
    expect(second.usage.cache_creation_input_tokens).toBe(total(second.usage) - second.usage.cache_read_input_tokens!);
  });

  it('caches nothing below the minimum length, or without breakpoints: billed as plain input', async () => {
    server = await startModelServer({ policy: decide }); // 1,024 tokens: more than these two turns
    const [short] = await twoTurns(new HttpMessagesClient({ baseUrl: server.url, apiKey: 'k' }));
    expect(short.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    await server.close();

    server = await startModelServer({ policy: decide, minCacheableTokens: 200 });
    const plain = await twoTurns(new HttpMessagesClient({ baseUrl: server.url, apiKey: 'k', promptCaching: false }));
    for (const answer of plain) expect(answer.usage).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
  });
});
