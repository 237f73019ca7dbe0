import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect } from '../../client/index.js';
import { openLedger } from '../../cli/state.js';
import { LOCAL_MANIFEST_BUCKET } from '../../lambdas/runs/batch.js';
import { leftBehind } from '../support/cli-process.js';
import { startServe, type Serving } from '../support/serve-process.js';
import { whenChanged } from '../support/when-changed.js';

/**
 * A batch of 200 runs on `savepoint serve` (its own process), which the test SIGKILLs mid-batch
 * and starts again: serve resumes the batch (local/runtime/batches.ts) and the runs it left
 * running; the runs API's start, idempotent on each item's run id, starts no run twice. The
 * ledger holds exactly 200 runs, all finished, and the charges provider's journal one charge
 * per customer.
 */
const agentModule = new URL('./fixtures/batch-payer.ts', import.meta.url).pathname;
const { children, dirs } = leftBehind();
const root = mkdtempSync(join(tmpdir(), 'savepoint-batch-kill-'));
dirs.push(root);

const ITEMS = 200;

/** The charges the provider made (its journal on disk): one line per charge. */
function charges(stateDir: string): { key: string; customer: string }[] {
  const file = join(stateDir, 'charges.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { key: string; customer: string });
}

describe('a batch whose engine was SIGKILLed mid-batch', () => {
  // Its items in the request, or in a manifest its execution reads from the twin's S3 (a file under the state directory).
  it.each(['items', 'manifest'] as const)('finishes after a restart with each of its 200 runs started once and each charge made once (%s)', async (source) => {
    const stateDir = join(root, `state-${source}`);
    const args = ['--state-dir', stateDir, 'serve', '--agent', agentModule];
    const items = Array.from({ length: ITEMS }, (_, index) => ({ customer: `c${index}` }));
    const batchId = source === 'items' ? 'kill200' : 'kill200m';
    const request = source === 'items' ? { items } : { manifest: { bucket: LOCAL_MANIFEST_BUCKET, key: 'customers.json' } };
    if (source === 'manifest') {
      mkdirSync(join(stateDir, 's3', LOCAL_MANIFEST_BUCKET), { recursive: true });
      writeFileSync(join(stateDir, 's3', LOCAL_MANIFEST_BUCKET, 'customers.json'), JSON.stringify(items));
    }
    let serving: Serving = await startServe(args, children);
    const started = await (await connect({ stateDir })).startBatch({ ...request, concurrency: 40, batchId });
    expect(started).toMatchObject({ batchId, created: true, concurrency: 40 });
    // Each item's run is named when the batch starts: a list's from the request, a manifest's from the object the runs function reads.
    expect(started.runs.map((run) => run.runId)).toEqual(items.map((_, index) => `${batchId}-${index}`));

    // Killed mid-batch: some customers charged, most not yet.
    await whenChanged(stateDir, () => charges(stateDir).length >= 30);
    serving.child.kill('SIGKILL');
    await serving.exited;
    const before = charges(stateDir).length;
    expect(before).toBeLessThan(ITEMS);

    serving = await startServe(args, children);
    expect(serving.output()).toContain(`savepoint: resumed batch ${batchId}`);
    const client = await connect({ stateDir });
    // The batch's end is written beside its input (batches/kill200.end.json): looked at when it changes.
    await whenChanged(join(stateDir, 'batches'), async () => (await client.batch(batchId))?.status === 'SUCCEEDED');
    const done = (await client.batch(batchId))!;
    expect(done.counts).toEqual({ succeeded: ITEMS });

    // Started again, the same batch starts nothing.
    const again = await client.startBatch({ ...request, concurrency: 40, batchId });
    expect(again).toMatchObject({ created: false, counts: { succeeded: ITEMS } });

    serving.child.kill('SIGTERM');
    expect(await serving.exited).toBe(0);
    const { ledger, close } = await openLedger(stateDir);
    try {
      const runs = await ledger.listRuns(1_000);
      expect(runs.map((run) => run.runId).sort()).toEqual(items.map((_, index) => `${batchId}-${index}`).sort());
      expect(runs.every((run) => run.status === 'succeeded')).toBe(true);
      // The kill interrupted runs: those were resumed (a second execution), not started again as new runs.
      expect(runs.some((run) => run.executions.length >= 2)).toBe(true);
    } finally {
      await close();
    }
    // Each customer charged once, under the one key of its run's one call.
    const made = charges(stateDir);
    expect(made).toHaveLength(ITEMS);
    expect(new Set(made.map((charge) => charge.customer)).size).toBe(ITEMS);
    expect(new Set(made.map((charge) => charge.key)).size).toBe(ITEMS);
  }, 400_000);
});
