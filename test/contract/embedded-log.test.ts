import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { PruneRecord } from '../../lambdas/ledger/pruning.js';
import { splitChained } from '../../lambdas/ledger/sealed-log.js';
import { at } from './fixtures.js';
import { fourRuns } from './spec/prune.js';

/**
 * The embedded ledger's log under a prune (what prune does on every engine: spec/prune.ts): the
 * log is rewritten without the pruned runs, the record's digest covers their lines, the record is
 * a sealed line of its own, and a prune with nothing to prune leaves the log as it was.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A ledger on disk with spec/prune.ts `fourRuns`: a (succeeded), b (killed), c (running), d (failed). */
async function fourRunsOnDisk(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'savepoint-log-'));
  dirs.push(dir);
  const ledger = EmbeddedLedger.open({ dir });
  await fourRuns(ledger);
  ledger.close();
  return dir;
}

describe('the embedded log under a prune', () => {
  it('prunes nothing, and writes nothing, when no run finished before the date', async () => {
    const dir = await fourRunsOnDisk();
    const before = readFileSync(join(dir, 'ledger.jsonl'), 'utf8');
    const ledger = EmbeddedLedger.open({ dir });
    expect(await ledger.prune(at(5), at(100))).toEqual([]);
    ledger.close();
    expect(readFileSync(join(dir, 'ledger.jsonl'), 'utf8')).toBe(before);
  });

  it("digests the removed records' log lines: a copy of the old log reproduces it", async () => {
    const dir = await fourRunsOnDisk();
    const old = readFileSync(join(dir, 'ledger.jsonl'), 'utf8').split('\n').slice(0, -1);
    const ledger = EmbeddedLedger.open({ dir });
    const [{ digest }] = (await ledger.prune(at(25), at(100))) as [PruneRecord];
    ledger.close();
    // The last line of each key of the pruned runs' partitions (run, tokens, blobs), without its chain, in key order.
    const latest = new Map<string, string>();
    for (const text of old) {
      const { pk, sk } = JSON.parse(text) as { pk: string; sk: string };
      if (/^(RUN|TOKEN|BLOB)#[ab]$/.test(pk)) latest.set(`${pk}\u0000${sk}`, splitChained(text)!.body);
    }
    const order = (key: string) => [['a', 'b'].indexOf(key.split('#')[1]!.split('\u0000')[0]!), ['RUN', 'TOKEN', 'BLOB'].indexOf(key.split('#')[0]!)];
    const keys = [...latest.keys()].sort((x, y) => {
      const [rx, px] = order(x);
      const [ry, py] = order(y);
      return rx! - ry! || px! - py! || (x < y ? -1 : x > y ? 1 : 0);
    });
    const expected = createHash('sha256');
    for (const key of keys) expected.update(latest.get(key)!).update('\n');
    expect(digest).toBe(`sha256:${expected.digest('hex')}`);
  });

  it('a prune record that was altered fails the open, naming it', async () => {
    const dir = await fourRunsOnDisk();
    const ledger = EmbeddedLedger.open({ dir });
    await ledger.prune(at(25), at(100));
    ledger.close();
    const path = join(dir, 'ledger.jsonl');
    writeFileSync(path, readFileSync(path, 'utf8').replace('"runIds":["a","b"]', '"runIds":["a"]'));
    expect(() => EmbeddedLedger.open({ dir })).toThrow(/PRUNED/);
  });
});
