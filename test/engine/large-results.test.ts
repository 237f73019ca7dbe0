import { DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { MessageRequest } from '../../lambdas/records/messages.js';
import { defineAgent, defineTool } from '../../lambdas/define.js';
import { parseBlobRef } from '../../lambdas/ledger/blobs.js';
import { localAwsConfig } from '../../local/services/aws-config.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { LEDGER_TABLE, startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';

/**
 * A tool whose result is far over DynamoDB's 400 KB item limit and Step Functions' 256 KB payload
 * limit, on the DynamoDB ledger (dynalite): the run completes, the model sees the whole result,
 * no item written is over the limit and no state's input or output is over the payload limit.
 */
const MB = 1024 * 1024;
const ITEM_LIMIT = 400 * 1024;
const PAYLOAD_LIMIT = 256 * 1024;

function bigAgent(seen: number[][]) {
  const text = (n: number) => 'ab🙂'.repeat(Math.ceil(n / 6)); // multi-byte, so chunks must split on characters
  const fetchBig = defineTool({
    name: 'fetch_big',
    description: 'Returns a large document.',
    input: z.object({}),
    effect: 'read',
    execute: async () => ({ document: text(MB) }),
  });
  const storeBig = defineTool({
    name: 'store_big',
    description: 'Stores something and answers with a large receipt.',
    input: z.object({}),
    effect: 'write',
    execute: async () => ({ receipt: text(MB / 2) }),
  });
  return defineAgent({
    name: 'big-results',
    model: 'sim:savepoint-sim-1',
    system: 'Read it.',
    input: z.object({ id: z.string() }),
    prompt: () => 'Fetch the document.',
    tools: [fetchBig, storeBig],
    // 1.5 MB of results in one call: the pre-call reservation bounds it at a token a byte, past the default budget.
    budgets: { maxTokens: 5_000_000, maxDollars: 100 },
    dev: {
      policy: (request: MessageRequest) => {
        const last = request.messages.at(-1)!;
        const results = Array.isArray(last.content) ? last.content.filter((block) => block.type === 'tool_result') : [];
        if (results.length === 0) {
          return {
            content: [
              { type: 'tool_use', id: 't1', name: 'fetch_big', input: {} },
              { type: 'tool_use', id: 't2', name: 'store_big', input: {} },
            ],
            stop_reason: 'tool_use',
          };
        }
        seen.push(results.map((block) => String(block.content).length));
        return { content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' };
      },
    },
  });
}

let stack: LocalStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe('tool results over the item limit, on the DynamoDB ledger', () => {
  it('complete the run, reach the model whole, and never make an item over 400 KB or a payload over 256 KB', async () => {
    const seen: number[][] = [];
    stack = await startLocalStack({ agent: bigAgent(seen), ledger: 'dynalite', retryDelayMs: 1 });
    const { executionArn } = stack.engine.startExecution({ name: 'big-1', input: { runId: 'big-1', input: { id: 'a' } } });
    await waitForChain(stack.engine, stack.ledger, 'big-1', executionArn);
    const run = (await stack.ledger.getRun('big-1'))!;
    expect(run.status).toBe('succeeded');

    // The model saw both results whole (JSON of the tools' answers).
    const expected = [JSON.stringify({ document: 'ab🙂'.repeat(Math.ceil(MB / 6)) }).length, JSON.stringify({ receipt: 'ab🙂'.repeat(Math.ceil(MB / 2 / 6)) }).length];
    expect(seen).toEqual([expected]);

    // The call records hold references; the chunks hold the rest.
    const { calls } = await stack.ledger.listConversation('big-1');
    expect(calls.map((call) => parseBlobRef(call.result)?.bytes)).toEqual([expect.any(Number), expect.any(Number)]);

    // Every item on the table, measured as DynamoDB sizes it (names + values, UTF-8): none near the limit.
    const dynamodb = new DynamoDBClient({ ...localAwsConfig, endpoint: (stack.endpoints as { dynamodb: string }).dynamodb });
    const sizes: number[] = [];
    let start: Record<string, any> | undefined;
    do {
      const page = await dynamodb.send(new ScanCommand({ TableName: LEDGER_TABLE, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) sizes.push(Buffer.byteLength(JSON.stringify(item)));
      start = page.LastEvaluatedKey;
    } while (start);
    dynamodb.destroy();
    expect(sizes.filter((size) => size > 200 * 1024).length).toBeGreaterThanOrEqual(6); // the chunks (1.5 MB of text)
    expect(Math.max(...sizes)).toBeLessThan(ITEM_LIMIT);

    // Every state's input and output in the execution history is under the payload limit.
    const payloads = stack.engine
      .getExecutionHistory(executionArn)
      .flatMap((event) => [event.stateEnteredEventDetails?.input, event.stateExitedEventDetails?.output, event.taskSucceededEventDetails?.output])
      .filter((payload): payload is string => payload !== undefined);
    expect(payloads.length).toBeGreaterThan(5);
    expect(Math.max(...payloads.map((payload) => Buffer.byteLength(payload)))).toBeLessThan(PAYLOAD_LIMIT);
  });
});
