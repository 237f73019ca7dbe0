import { describe, expect, it } from 'vitest';
import type { Ledger } from '../../../lambdas/ledger/ledger.js';
import type { Pruning } from '../../../lambdas/ledger/pruning.js';
import { parseBlobRef, readEffectResult, storeCallResult } from '../../../lambdas/ledger/blobs.js';
import { approval, at, call, holder, run, turn } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/** A ledger that keeps prune records (both storage engines: storage-ledger.ts `pruningOf`). */
export type PruningLedger = Ledger & Pruning;

/**
 * Runs old (succeeded at 10 s, two turns, a blob, a decided approval with its token, a completed
 * refund under a business key), long (succeeded at 10 s, 60 turns: more than one BatchWriteItem on
 * DynamoDB), running, waiting (killed at 20 s, an approval still pending), parent (succeeded at
 * 10 s) with its fork child still running, late (succeeded at 50 s); written through the Ledger API.
 */
export async function sixRuns(ledger: Ledger): Promise<void> {
  for (const runId of ['old', 'long', 'running', 'waiting', 'parent', 'late']) await ledger.createRun(run(runId));
  await ledger.recordTurn(turn(1, 'first of old', 'old'));
  await ledger.recordTurn(turn(2, 'second of old', 'old'));
  await ledger.putBlob('old', 'd1', ['blob of old']);
  await ledger.upsertApproval(approval({ runId: 'old' }), 'token-of-old');
  await ledger.decideApproval(approval({ runId: 'old' }), { status: 'approved', decidedBy: 'ops' }, at(3));
  await ledger.claimCall(call({ runId: 'old', effectKey: holder().key }), at(4), holder({ runId: 'old' }));
  await ledger.completeCall({ runId: 'old', turn: 3, call: 1, outcome: { outcome: 'ok', result: '{"refundId":"re_1"}', latencyMs: 1 }, now: at(5), effect: { key: holder().key } });
  for (let number = 1; number <= 60; number++) await ledger.recordTurn(turn(number, `turn ${number}`, 'long'));
  await ledger.upsertApproval(approval({ runId: 'waiting', approvalId: 'apv_waiting_000000' }), 'token-of-waiting');
  await ledger.createRun(run('child', { forkedFrom: { runId: 'parent', turn: 1, effects: 'reuse' } }));
  await ledger.recordFork('parent', { runId: 'child', turn: 1 });
  for (const runId of ['old', 'long', 'parent']) await ledger.finishRun(runId, { status: 'succeeded' }, at(10));
  await ledger.finishRun('waiting', { status: 'killed', stopReason: 'killed' }, at(20));
  await ledger.finishRun('late', { status: 'succeeded' }, at(50));
}

/** Runs a (succeeded at 10 s), b (killed at 20 s), c (running), d (failed at 30 s), each with two turns and a blob; a's call holds an effect. */
export async function fourRuns(ledger: Ledger): Promise<void> {
  for (const runId of ['a', 'b', 'c', 'd']) {
    await ledger.createRun(run(runId));
    await ledger.recordTurn(turn(1, `first of ${runId}`, runId));
    await ledger.recordTurn(turn(2, `second of ${runId}`, runId));
    await ledger.putBlob(runId, 'd1', [`blob of ${runId}`]);
  }
  await ledger.claimCall(call({ runId: 'a', effectKey: holder().key }), at(1), holder({ runId: 'a' }));
  await ledger.finishRun('a', { status: 'succeeded' }, at(10));
  await ledger.finishRun('b', { status: 'killed', stopReason: 'killed' }, at(20));
  await ledger.finishRun('d', { status: 'failed', error: { error: 'Agent.Transient', cause: 'x' } }, at(30));
}

/**
 * `prune` (issue 26, item 9; lambdas/ledger/pruning.ts, one procedure for every engine that keeps
 * prune records): what goes, what stays (the one rule, `pruneVerdict`), and the sealed record
 * `verifyPrunes` checks. Where the driver can read its store (`stored`), that nothing of a pruned
 * run is left there.
 */
export function pruneSpec(make: MakeLedger): void {
  describe('prune', () => {
    const { ledger: shared, under } = useLedger(make);
    const ledger = shared as PruningLedger;
    /** Nothing of the partitions `pks` left in the store behind the ledger. */
    const gone = async (pks: readonly string[]) => {
      if (under.stored) for (const pk of pks) expect(await under.stored(pk), pk).toEqual([]);
    };

    it('removes the runs the rule lets go with their turns, approvals, tokens and blobs, keeps the effect, and seals what it removed', async () => {
      await sixRuns(ledger);
      const pruned = await ledger.prune(at(25), at(100));
      expect(pruned).toEqual([
        {
          kind: 'prune',
          prunedAt: at(100).toISOString(),
          finishedBefore: at(25).toISOString(),
          runIds: ['long', 'old'],
          // long: its run and 60 turns; old: its run, 2 turns, the approval and the call, the blob chunk, the token.
          records: 61 + 7,
          digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
          // old's write: its idempotency key outlives the call (local/runtime/world-facts.ts).
          writes: ['r1:3:toolu_003_1'],
        },
      ]);
      await gone(['RUN#old', 'TOKEN#old', 'BLOB#old', 'RUN#long']);
      expect((await ledger.listRuns(10)).map((kept) => kept.runId).sort()).toEqual(['child', 'late', 'parent', 'running', 'waiting']);
      // The refund's business-key effect is kept: a later run asking for the same refund is answered from it.
      expect(await ledger.getEffect(holder().key)).toMatchObject({ status: 'completed', outcome: 'ok' });
      expect(await ledger.prunes()).toEqual(pruned);
      expect(await ledger.verifyPrunes()).toEqual([]);
    });

    it('removes the runs that finished before the date, keeps running and failed ones and the effects, and seals what it removed', async () => {
      await fourRuns(ledger);
      const pruned = await ledger.prune(at(25), at(100));
      expect(pruned).toEqual([
        {
          kind: 'prune',
          prunedAt: at(100).toISOString(),
          finishedBefore: at(25).toISOString(),
          runIds: ['a', 'b'],
          records: 9, // per run: its run record, two turns, one blob chunk; and run a's call that claimed the effect
          digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
          writes: ['r1:3:toolu_003_1'], // run a's write: its idempotency key outlives the call (local/runtime/world-facts.ts)
        },
      ]);
      expect(await ledger.getRun('a')).toBeUndefined();
      expect(await ledger.getBlob('b', 'd1')).toEqual([]);
      expect((await ledger.listRuns(10)).map((r) => r.runId).sort()).toEqual(['c', 'd']);
      expect(await ledger.getEffect('refunds:issue_refund:rr_1')).toMatchObject({ runId: 'a' });
      expect(await ledger.prunes()).toEqual(pruned);
      expect(await ledger.verifyPrunes()).toEqual([]);
      await gone(['RUN#a', 'BLOB#a', 'RUN#b', 'BLOB#b']);
    });

    it("keeps a business-key effect's result stored by reference, under the effect, while the run that made it goes", async () => {
      const text = JSON.stringify({ receipt: 'é'.repeat(40_000) }); // 80 KB: stored by reference
      await ledger.createRun(run('big'));
      await ledger.claimCall(call({ runId: 'big', effectKey: holder().key }), at(1), holder({ runId: 'big' }));
      const stored = await storeCallResult(ledger, 'big', text, undefined, holder().key);
      await ledger.completeCall({ runId: 'big', turn: 3, call: 1, outcome: { outcome: 'ok', result: stored, latencyMs: 1 }, now: at(2), effect: { key: holder().key } });
      await ledger.finishRun('big', { status: 'succeeded' }, at(10));
      expect((await ledger.prune(at(25), at(100))).flatMap((record) => record.runIds)).toEqual(['big']);
      await gone(['RUN#big', 'BLOB#big']);
      const effect = await ledger.getEffect(holder().key);
      expect(effect).toMatchObject({ runId: 'big', status: 'completed', result: stored });
      expect(await readEffectResult(ledger, holder().key, parseBlobRef(effect!.result)!)).toBe(text);
      expect(await ledger.verifyPrunes()).toEqual([]);
    });

    it('plans exactly what it then removes, naming why each run that finished before the date is kept, and removes nothing itself', async () => {
      await sixRuns(ledger);
      const plan = await ledger.planPrune(at(25));
      expect(plan).toEqual({
        prune: ['long', 'old'],
        kept: [
          { runId: 'parent', reason: 'its fork child is running and reads its records' },
          { runId: 'waiting', reason: 'it has 1 approval pending' },
        ],
      });
      // Nothing removed, nothing sealed: every run is there, and there is no prune record.
      expect((await ledger.listRuns(10)).map((kept) => kept.runId).sort()).toEqual(['child', 'late', 'long', 'old', 'parent', 'running', 'waiting']);
      expect(await ledger.prunes()).toEqual([]);
      expect((await ledger.prune(at(25), at(100))).flatMap((record) => record.runIds)).toEqual(plan.prune);
      expect(await ledger.planPrune(at(25))).toEqual({ prune: [], kept: plan.kept });
    });

    it("keeps a fork's parent while the fork runs, and lets both go once it finished", async () => {
      await sixRuns(ledger);
      await ledger.prune(at(25), at(100));
      await ledger.finishRun('child', { status: 'succeeded' }, at(15));
      const [second] = await ledger.prune(at(25), at(101));
      expect(second).toMatchObject({ runIds: ['child', 'parent'] });
      expect((await ledger.prunes()).map((record) => record.runIds)).toEqual([['long', 'old'], ['child', 'parent']]);
      expect(await ledger.verifyPrunes()).toEqual([]);
    });

    it('prunes nothing, and writes no record, when no run qualifies', async () => {
      await sixRuns(ledger);
      expect(await ledger.prune(at(5), at(100))).toEqual([]);
      expect(await ledger.prunes()).toEqual([]);
    });

    it("refuses a new run under a pruned run's id, naming the prune, and starts any other", async () => {
      await fourRuns(ledger);
      await ledger.prune(at(25), at(100));
      expect(await ledger.prunedRun('a')).toEqual({ prunedAt: at(100).toISOString() });
      expect(await ledger.prunedRun('c')).toBeUndefined();
      await expect(ledger.createRun(run('a'))).rejects.toMatchObject({
        name: 'Agent.InvalidInput',
        message: `runId: run a was pruned at ${at(100).toISOString()} (savepoint prune): its id names that run for good, and a new run under it would repeat what it did; pass another run id`,
      });
      expect(await ledger.getRun('a')).toBeUndefined();
      expect(await ledger.createRun(run('e'))).toBe(true);
      expect(await ledger.verifyPrunes()).toEqual([]);
    });
  });
}
