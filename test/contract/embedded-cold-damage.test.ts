import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { COLD_DIR } from '../../lambdas/ledger/cold-store.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { at, run } from './fixtures.js';

/**
 * `ledger.cold/` under a live engine: the finished runs the ledger let go of from memory are found
 * through it. A bucket file deleted or edited while the engine runs is damage, named — never read
 * as "nothing there" (a run that vanished from the ledger).
 */
describe('the embedded ledger with its cold store damaged under it', () => {
  let dir: string;
  let ledger: EmbeddedLedger;
  // The bucket a run's group is noted in (cold-store.ts: the first byte of the sha256 of its key).
  const bucketOf = (runId: string) => join(dir, COLD_DIR, `${createHash('sha256').update(`RUN#${runId}`).digest('hex').slice(0, 2)}.jsonl`);

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'savepoint-cold-'));
    ledger = EmbeddedLedger.open({ dir, retainFinishedRuns: 1, listedFinishedRuns: 1 });
    // Three finished runs: the two older ones are let go of from memory, into the cold store.
    for (const runId of ['cold-a', 'cold-b', 'hot-c']) {
      await ledger.createRun(run(runId));
      await ledger.finishRun(runId, { status: 'succeeded', stopReason: 'done' }, at(1));
    }
    expect((await ledger.getRun('cold-a'))?.status).toBe('succeeded');
  });
  afterEach(() => {
    ledger.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('names a bucket file that was deleted, instead of finding no run', async () => {
    await ledger.getRun('hot-c'); // cold-a back out of memory
    unlinkSync(bucketOf('cold-a'));
    await expect(ledger.getRun('cold-a')).rejects.toThrow(new RegExp(`${bucketOf('cold-a').replace(/[/.]/g, '\\$&')}.*the bucket file is missing`));
  });

  it('names a bucket file whose newest line was cut off', async () => {
    await ledger.getRun('hot-c');
    const path = bucketOf('cold-a');
    const lines = readFileSync(path, 'utf8').split('\n').slice(0, -2);
    writeFileSync(path, lines.length > 0 ? `${lines.join('\n')}\n` : '');
    await expect(ledger.getRun('cold-a')).rejects.toThrow(/the bucket file is not what the engine wrote/);
  });
});
