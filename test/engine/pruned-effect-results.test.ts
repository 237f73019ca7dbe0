import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { MessageRequest } from '../../lambdas/records/messages.js';
import { defineAgent, defineTool } from '../../lambdas/define.js';
import { parseBlobRef, readResult } from '../../lambdas/ledger/blobs.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { pruningOf } from '../../lambdas/ledger/storage-ledger.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';

/**
 * A business-key effect whose result is stored by reference (over 64 KiB), on the synthesized state
 * machine and both ledgers: the run that made it is pruned (its blobs go with it), and a later run
 * asking for the same effect is answered with the recorded result — the effect's own — and nothing
 * is sent again.
 */
const receipt = (id: string) => ({ id, statement: 'é🙂'.repeat(20_000) }); // ~120 KB of multi-byte text

/** `maxResultTokens`: the model is shown a head of the statement and a pointer to the whole (call-tool.ts `byReference`). */
function statementAgent(sent: string[], seen: unknown[], maxResultTokens?: number) {
  const issue = defineTool({
    name: 'issue_statement',
    description: 'Issues the statement of an account and answers with it.',
    input: z.object({ account: z.string() }),
    effect: 'write',
    idempotencyKey: (args) => args.account,
    ...(maxResultTokens !== undefined && { maxResultTokens }),
    execute: async (args) => {
      sent.push(args.account);
      return receipt(args.account);
    },
  });
  return defineAgent({
    name: 'statements',
    model: 'sim:savepoint-sim-1',
    system: 'Issue it.',
    input: z.object({ account: z.string() }),
    prompt: (input) => `Issue the statement of ${input.account}.`,
    tools: [issue],
    dev: {
      policy: (request: MessageRequest) => {
        const last = request.messages.at(-1)!;
        const result = Array.isArray(last.content) ? last.content.find((block) => block.type === 'tool_result') : undefined;
        if (!result) return { content: [{ type: 'tool_use', id: 't1', name: 'issue_statement', input: { account: 'acc-1' } }], stop_reason: 'tool_use' };
        seen.push({ isError: result.is_error === true, content: JSON.parse(String(result.content)) });
        return { content: [{ type: 'text', text: 'Issued.' }], stop_reason: 'end_turn' };
      },
    },
  });
}

let stack: LocalStack | undefined;
/** Runs the agent for acc-1 as run `runId` to its end, on the synthesized state machine: its run record. */
const runner = (on: LocalStack) => async (runId: string) => {
  const { executionArn } = on.engine.startExecution({ name: runId, input: { runId, input: { account: 'acc-1' } } });
  await waitForChain(on.engine, on.ledger, runId, executionArn);
  return (await on.ledger.getRun(runId))!;
};
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe.each(['embedded', 'dynalite'] as const)('a business-key effect’s result stored by reference, its run pruned (%s ledger)', (ledger) => {
  it('answers a later run of the same key with the recorded result, sending nothing again', { timeout: 120_000 }, async () => {
    const sent: string[] = [];
    const seen: unknown[] = [];
    stack = await startLocalStack({ agent: statementAgent(sent, seen), ledger, retryDelayMs: 1 });
    const run = runner(stack);

    expect(await run('first')).toMatchObject({ status: 'succeeded' });
    const effect = await stack.ledger.getEffect('statements:issue_statement:acc-1');
    expect(effect).toMatchObject({ runId: 'first', status: 'completed', outcome: 'ok' });
    expect(parseBlobRef(effect!.result)).toBeDefined(); // stored by reference

    const pruned = await pruningOf(stack.ledger)!.prune(new Date('2999-01-01'), new Date());
    expect(pruned.flatMap((record) => record.runIds)).toEqual(['first']);
    expect(await stack.ledger.getRun('first')).toBeUndefined();

    const second = await run('second');
    expect(second, JSON.stringify(second.error)).toMatchObject({ status: 'succeeded' });
    expect(sent).toEqual(['acc-1']);
    expect(seen).toEqual([
      { isError: false, content: receipt('acc-1') },
      { isError: false, content: receipt('acc-1') },
    ]);
    const { calls } = await stack.ledger.listConversation('second');
    expect(calls).toMatchObject([{ name: 'issue_statement', outcome: 'ok' }]);
  });

  it('answers the model with a named error, never a second send, where an earlier version kept the result with the pruned run only', { timeout: 120_000 }, async () => {
    const sent: string[] = [];
    const seen: unknown[] = [];
    // The ledger as an earlier version wrote it while `first` ran: the effect's result stored under its run only.
    let earlier = true;
    const decorateLedger = (inner: Ledger): Ledger => new Proxy(inner, { get: (target, key, receiver) => (key === 'putEffectBlob' && earlier ? async () => undefined : Reflect.get(target, key, receiver)) });
    stack = await startLocalStack({ agent: statementAgent(sent, seen), ledger, retryDelayMs: 1, decorateLedger });
    const run = runner(stack);
    expect(await run('first')).toMatchObject({ status: 'succeeded' });
    earlier = false;
    // While the run that made it is there, its result is read from that run's blobs.
    expect(await run('while-there')).toMatchObject({ status: 'succeeded' });
    await pruningOf(stack.ledger)!.prune(new Date('2999-01-01'), new Date());

    expect(await run('second')).toMatchObject({ status: 'succeeded' });
    expect(sent).toEqual(['acc-1']);
    expect(seen).toEqual([
      { isError: false, content: receipt('acc-1') },
      { isError: false, content: receipt('acc-1') },
      {
        isError: true,
        content: {
          error: 'effect_result_gone',
          key: 'statements:issue_statement:acc-1',
          message: expect.stringMatching(/^issue_statement was already done under this business key \(statements:issue_statement:acc-1\) by run first at \S+, and was not sent again; its result was stored with that run, which is no longer in the ledger \(pruned\), so it cannot be shown\. Do not call issue_statement for this again\.$/),
        },
      },
    ]);
  });

  /** A cut result as the model is shown it: the head of the whole, and `stored`, the reference to the whole in the run's own blobs. */
  type Cut = { truncated: true; bytes: number; head: string; stored: string | null; message?: string };
  const cutOf = (seen: unknown): Cut => (seen as { content: Cut }).content;

  it('gives a later run of the key a cut result whose pointer to the whole resolves in its own run, after the holder is pruned', { timeout: 120_000 }, async () => {
    const sent: string[] = [];
    const seen: unknown[] = [];
    stack = await startLocalStack({ agent: statementAgent(sent, seen, 1_000), ledger, retryDelayMs: 1 });
    const run = runner(stack);
    const whole = JSON.stringify(receipt('acc-1'));

    expect(await run('first')).toMatchObject({ status: 'succeeded' });
    const shown = cutOf(seen[0]);
    expect(shown).toMatchObject({ truncated: true, bytes: Buffer.byteLength(whole), stored: expect.stringMatching(/^blob:v1:/) });
    expect(await readResult(stack.ledger, 'first', parseBlobRef(shown.stored!)!)).toBe(whole);

    await pruningOf(stack.ledger)!.prune(new Date('2999-01-01'), new Date());
    expect(await stack.ledger.getRun('first')).toBeUndefined();

    const second = await run('second');
    expect(second, JSON.stringify(second.error)).toMatchObject({ status: 'succeeded' });
    expect(sent).toEqual(['acc-1']);
    // The same cut, and its pointer names the whole where the later run's own references resolve.
    expect(cutOf(seen[1])).toEqual(shown);
    expect(await readResult(stack.ledger, 'second', parseBlobRef(shown.stored!)!)).toBe(whole);
  });

  it('tells a later run the whole of a cut result is no longer kept where an earlier version kept it with the pruned run only', { timeout: 120_000 }, async () => {
    const sent: string[] = [];
    const seen: unknown[] = [];
    let earlier = true;
    const decorateLedger = (inner: Ledger): Ledger => new Proxy(inner, { get: (target, key, receiver) => (key === 'putEffectBlob' && earlier ? async () => undefined : Reflect.get(target, key, receiver)) });
    stack = await startLocalStack({ agent: statementAgent(sent, seen, 1_000), ledger, retryDelayMs: 1, decorateLedger });
    const run = runner(stack);
    const whole = JSON.stringify(receipt('acc-1'));
    expect(await run('first')).toMatchObject({ status: 'succeeded' });
    earlier = false;
    const shown = cutOf(seen[0]);
    // While the run that made it is there, the whole is copied from that run's blobs.
    expect(await run('while-there')).toMatchObject({ status: 'succeeded' });
    expect(cutOf(seen[1])).toEqual(shown);
    expect(await readResult(stack.ledger, 'while-there', parseBlobRef(shown.stored!)!)).toBe(whole);
    await pruningOf(stack.ledger)!.prune(new Date('2999-01-01'), new Date());

    expect(await run('second')).toMatchObject({ status: 'succeeded' });
    expect(sent).toEqual(['acc-1']);
    // The head it was shown, and no pointer to a whole that is gone.
    expect(seen[2]).toEqual({
      isError: false,
      content: { truncated: true, bytes: shown.bytes, head: shown.head, stored: null, message: expect.stringMatching(/no longer kept/) },
    });
  });
});
