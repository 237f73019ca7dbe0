import { createHash } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { MessageRequest } from '../../lambdas/records/messages.js';
import { defineAgent, defineTool } from '../../lambdas/define.js';
import { parseBlobRef, readResult } from '../../lambdas/ledger/blobs.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { verifyRun } from '../../lambdas/ledger/seal.js';
import { pruningOf } from '../../lambdas/ledger/storage-ledger.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';
import { manualClock } from '../support/manual-clock.js';

/**
 * A fork of a run whose tool results were cut for the model (`maxResultTokens`), on the synthesized
 * state machine and both ledgers: the cut's `stored` names the whole in the blobs of the run whose
 * record holds it, so the fork — its copied calls, a write a `reuse` fork answers from the parent's
 * record, a read a dry fork answers from it — holds the whole in its own blobs, also once the parent
 * is pruned (`savepoint prune`).
 */
const statement = (id: string) => ({ id, lines: 'é🙂'.repeat(20_000) }); // ~120 KB of multi-byte text
const receipt = (id: string) => ({ id, issued: true, copy: '🙂é'.repeat(20_000) });

/** Fetches a statement (a read), then issues it (a write, keyed with `keyed`), then ends; both results cut to 1,000 bytes. */
function statementAgent(sent: string[], keyed = false) {
  const fetch = defineTool({
    name: 'fetch_statement',
    description: 'Reads the statement of an account.',
    input: z.object({ account: z.string() }),
    effect: 'read',
    maxResultTokens: 1_000,
    execute: async (args) => statement(args.account),
  });
  const issue = defineTool({
    name: 'issue_statement',
    description: 'Issues the statement of an account and answers with its receipt.',
    input: z.object({ account: z.string() }),
    effect: 'write',
    maxResultTokens: 1_000,
    ...(keyed && { idempotencyKey: (args: { account: string }) => args.account }),
    execute: async (args) => {
      sent.push(args.account);
      return receipt(args.account);
    },
  });
  return defineAgent({
    name: 'statements',
    model: 'sim:savepoint-sim-1',
    system: 'Fetch it, then issue it.',
    input: z.object({ account: z.string() }),
    prompt: (input) => `Issue the statement of ${input.account}.`,
    tools: [fetch, issue],
    dev: {
      policy: (request: MessageRequest) => {
        const results = request.messages.flatMap((message) => (Array.isArray(message.content) ? message.content.filter((block) => block.type === 'tool_result') : []));
        if (results.length === 0) return { content: [{ type: 'tool_use', id: 't1', name: 'fetch_statement', input: { account: 'acc-1' } }], stop_reason: 'tool_use' };
        if (results.length === 1) return { content: [{ type: 'tool_use', id: 't2', name: 'issue_statement', input: { account: 'acc-1' } }], stop_reason: 'tool_use' };
        return { content: [{ type: 'text', text: 'Issued.' }], stop_reason: 'end_turn' };
      },
    },
  });
}

type Cut = { truncated: true; bytes: number; head: string; stored: string | null; message?: string };
const wholes: Record<string, string> = { fetch_statement: JSON.stringify(statement('acc-1')), issue_statement: JSON.stringify(receipt('acc-1')) };

let stack: LocalStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

describe.each(['embedded', 'dynalite'] as const)('a fork of a run with results cut for the model (%s ledger)', (ledger) => {
  /** A stack on a manual clock: each run a minute after the last, so a prune can take the parent and not its forks. */
  async function start(sent: string[], options: { keyed?: boolean; decorateLedger?: (inner: Ledger) => Ledger } = {}) {
    const clock = manualClock();
    const on = (stack = await startLocalStack({ agent: statementAgent(sent, options.keyed), ledger, retryDelayMs: 1, clock, ...(options.decorateLedger && { decorateLedger: options.decorateLedger }) }));
    const run = async (runId: string, fork?: Record<string, unknown>) => {
      clock.advance(60_000);
      const { executionArn } = on.engine.startExecution({ name: runId, input: { runId, input: { account: 'acc-1' }, ...(fork && { fork }) } });
      await waitForChain(on.engine, on.ledger, runId, executionArn);
      const record = (await on.ledger.getRun(runId))!;
      expect(record, JSON.stringify(record.error)).toMatchObject({ status: 'succeeded' });
      return record;
    };
    /** Prunes the runs that finished by `runId`'s end, `runId` among them (the later ones stay). */
    const pruneThrough = async (runId: string) => {
      const finished = Date.parse((await on.ledger.getRun(runId))!.finishedAt!);
      await pruningOf(on.ledger)!.prune(new Date(finished + 1), clock.now());
      expect(await on.ledger.getRun(runId)).toBeUndefined();
    };
    return { on, run, pruneThrough };
  }

  /** Each call of `runId` whose result is a cut (a dry fork's write is not), with the whole its `stored` names read under `runId` (a missing or damaged chunk throws). */
  async function cutsOf(on: LocalStack, runId: string): Promise<Record<string, { cut: Cut; whole: string | undefined }>> {
    const { calls } = await on.ledger.listConversation(runId);
    const cuts: Record<string, { cut: Cut; whole: string | undefined }> = {};
    for (const call of calls) {
      const cut = JSON.parse(call.result!) as Cut;
      if (cut.truncated) cuts[call.name] = { cut, whole: cut.stored === null ? undefined : await readResult(on.ledger, runId, parseBlobRef(cut.stored)!) };
    }
    return cuts;
  }

  it("copies each cut result's whole with it: the fork reads it under its own run id, also after the parent is pruned", { timeout: 120_000 }, async () => {
    const sent: string[] = [];
    const { on, run, pruneThrough } = await start(sent);
    await run('parent');
    const parent = await cutsOf(on, 'parent');
    expect(parent.fetch_statement!.cut).toMatchObject({ truncated: true, bytes: Buffer.byteLength(wholes.fetch_statement!), stored: expect.stringMatching(/^blob:v1:/) });

    await run('fork', { from: 'parent', at: 3 });
    const expected = { fetch_statement: { cut: parent.fetch_statement!.cut, whole: wholes.fetch_statement }, issue_statement: { cut: parent.issue_statement!.cut, whole: wholes.issue_statement } };
    expect(await cutsOf(on, 'fork')).toEqual(expected);

    await pruneThrough('parent');
    expect(await cutsOf(on, 'fork')).toEqual(expected);
    expect((await verifyRun(on.ledger, 'fork')).problems).toEqual([]);
    expect(sent).toEqual(['acc-1']);
  });

  // Keyed, the write a reuse fork repeats is answered by its business key's effect (tools/effects.ts `doneFrom`), before the fork's tool is asked.
  it.each([false, true])("gives the write a reuse fork answers from the parent's record, and the read a dry fork answers from it, the whole in the fork (business key: %s)", { timeout: 120_000 }, async (keyed) => {
    const sent: string[] = [];
    const { on, run, pruneThrough } = await start(sent, { keyed });
    await run('parent');
    const parent = await cutsOf(on, 'parent');
    // From turn 1: the fork makes each call again, and the parent's record answers the write (reuse) or the read (dry).
    await run('reused', { from: 'parent', at: 1 });
    await run('dry', { from: 'parent', at: 1, effects: 'dry' });
    expect(sent).toEqual(['acc-1']);
    await pruneThrough('parent');

    expect((await cutsOf(on, 'reused')).issue_statement).toEqual({ cut: parent.issue_statement!.cut, whole: wholes.issue_statement });
    expect(await cutsOf(on, 'dry')).toEqual({ fetch_statement: { cut: parent.fetch_statement!.cut, whole: wholes.fetch_statement } });
  });

  it("copies a parent's cut whose whole it never held (a later run of a business key recorded by 0.21.0) as kept no longer, not as damage", { timeout: 120_000 }, async () => {
    const sent: string[] = [];
    // The ledger as 0.21.0 wrote it: the effect's whole kept with the run that made it only, and a
    // later run of its key recording the cut as the holder's record has it, with no whole of its own.
    const issued = createHash('sha256').update(wholes.issue_statement!, 'utf8').digest('hex');
    const decorateLedger = (inner: Ledger): Ledger =>
      new Proxy(inner, {
        get: (target, key, receiver) => {
          if (key === 'putEffectBlob') return async () => undefined;
          if (key === 'putBlob') return async (runId: string, digest: string, chunks: string[]) => (runId === 'later' && digest === issued ? undefined : target.putBlob(runId, digest, chunks));
          return Reflect.get(target, key, receiver);
        },
      });
    const { on, run } = await start(sent, { keyed: true, decorateLedger });
    await run('first');
    await run('later');
    expect(sent).toEqual(['acc-1']);
    const later = await on.ledger.listConversation('later');
    const dangling = JSON.parse(later.calls.find((call) => call.name === 'issue_statement')!.result!) as Cut;
    await expect(readResult(on.ledger, 'later', parseBlobRef(dangling.stored!)!)).rejects.toThrow(/no chunk found/);

    await run('fork', { from: 'later', at: 3 });
    const fork = await cutsOf(on, 'fork');
    expect(fork.issue_statement).toEqual({ cut: { ...dangling, stored: null, message: expect.stringMatching(/no longer kept/) }, whole: undefined });
    expect(fork.fetch_statement!.whole).toBe(wholes.fetch_statement);
  });
});
