import { describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { Ledger, TurnSeen } from '../../lambdas/ledger/ledger.js';
import { run, turn } from './fixtures.js';
import { describeLedgerContract } from './ledger.contract.js';

describeLedgerContract('embedded, in memory', async () => ({ ledger: EmbeddedLedger.open() }));

// Reads hand out the stored records, frozen (a replay's ledger): every rule of the protocol holds,
// and none of them changes a record it read (it would throw).
describeLedgerContract('embedded, in memory, shared reads', async () => ({ ledger: EmbeddedLedger.open({ sharedReads: true }) }), { sharedReads: true });

// A replay's ledger: it hands no state either (its loop hands CallTool none to take it from),
// and every rule of the protocol holds all the same; a turn's write tells what it saw, unsealed.
describeLedgerContract('embedded, in memory, shared reads, handing no state', async () => ({ ledger: EmbeddedLedger.open({ sharedReads: true, handsState: false }) }), { sharedReads: true, tellsSeen: false, marksVersions: false });
describe('embedded, in memory, handing no state', () => {
  it("tells a turn's write what it saw, with no basis: nothing is handed or sealed", async () => {
    const ledger = EmbeddedLedger.open({ sharedReads: true, handsState: false });
    await ledger.createRun(run('r1'));
    let seen: TurnSeen | undefined;
    await ledger.recordTurn(turn(3), { stepKey: 'turn:3', deltas: { steps: 1, modelTurns: 1 }, handing: (saw) => (seen = saw) });
    expect(seen).toEqual({ run: await ledger.getRun('r1') });
    // Handed by the same ledger opened otherwise: the basis is there.
    const handing = EmbeddedLedger.open({ sharedReads: true });
    await handing.createRun(run('r1'));
    await handing.recordTurn(turn(3), { stepKey: 'turn:3', deltas: { steps: 1, modelTurns: 1 }, handing: (saw) => (seen = saw) });
    expect(seen?.basis).toMatchObject({ run: expect.any(String), mac: expect.any(String) });
  });
});

describeLedgerContract(
  'embedded, on disk',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-ledger-'));
    let ledger = EmbeddedLedger.open({ dir });
    return {
      ledger,
      close: () => {
        ledger.close();
        rmSync(dir, { recursive: true, force: true });
      },
      stored: async (pk) => logLines(join(dir, 'ledger.jsonl'), pk),
      // Damage: the log file, edited while the ledger is closed; the ledger reopened on it.
      damage: async (runId, edit) => {
        ledger.close();
        damageLog(join(dir, 'ledger.jsonl'), `RUN#${runId}`, edit);
        ledger = EmbeddedLedger.open({ dir });
        return ledger;
      },
    };
  },
  { damageable: true },
);

// A finished run's records, and a business-key effect's, are let go of from memory past
// `retainFinishedRuns` / `retainEffects` and read back from the log when asked for (noted in
// ledger.cold/); the newest finished runs are listed from a list of `listedFinishedRuns`, the rest
// from the cold store: with 1 of each, every rule runs over partitions read back from disk.
describeLedgerContract('embedded, on disk, finished runs and effects read back from the log', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'savepoint-ledger-'));
  const ledger = EmbeddedLedger.open({ dir, retainFinishedRuns: 1, retainEffects: 1, listedFinishedRuns: 1 });
  return {
    ledger,
    stored: async (pk) => logLines(join(dir, 'ledger.jsonl'), pk),
    close: () => {
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

/** The lines of the log at `path` that hold an item of partition `pk`. */
function logLines(path: string, pk: string): unknown[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .slice(0, -1)
    .map((text) => JSON.parse(text) as { pk: string })
    .filter((line) => line.pk === pk);
}

/**
 * Applies `edit` to the latest version of each item of a partition, in the log: a changed item's
 * last line gets the changed record (keeping its seal and chain), a deleted item loses its lines,
 * a new one is appended.
 */
function damageLog(path: string, pk: string, edit: (items: Map<string, Record<string, unknown>>) => void): void {
  type Line = { pk: string; sk: string; record: Record<string, unknown>; seal: string };
  const lines = readFileSync(path, 'utf8').split('\n').slice(0, -1);
  const last = new Map<string, number>();
  lines.forEach((text, index) => {
    const line = JSON.parse(text) as Line;
    if (line.pk === pk) last.set(line.sk, index);
  });
  const before = new Map<string, Record<string, unknown>>(
    [...last].map(([sk, index]) => {
      const line = JSON.parse(lines[index]!) as Line;
      return [sk, { ...line.record, seal: line.seal }];
    }),
  );
  const after = new Map([...before].map(([sk, item]) => [sk, structuredClone(item)]));
  edit(after);
  const out = lines.filter((text) => {
    const line = JSON.parse(text) as Line;
    return line.pk !== pk || after.has(line.sk);
  });
  for (const [sk, item] of after) {
    const { seal, sk: _sk, ...record } = item;
    if (!before.has(sk)) {
      out.push(JSON.stringify({ pk, sk, record, seal, chain: 'forged' }));
      continue;
    }
    if (JSON.stringify(item) === JSON.stringify(before.get(sk))) continue;
    let index = out.length - 1;
    while ((JSON.parse(out[index]!) as Line).pk !== pk || (JSON.parse(out[index]!) as Line).sk !== sk) index--;
    const line = JSON.parse(out[index]!) as Line & Record<string, unknown>;
    out[index] = JSON.stringify({ ...line, record });
  }
  writeFileSync(path, `${out.join('\n')}\n`);
}

describeLedgerContract('embedded, on disk, reopened before every call', async () => {
  // Durability: every call runs on a ledger freshly replayed from the log, so a test passes only
  // if everything acknowledged before it survived a close and reopen.
  const dir = mkdtempSync(join(tmpdir(), 'savepoint-ledger-'));
  let current = EmbeddedLedger.open({ dir });
  const reopening = new Proxy({} as Ledger, {
    get: (_, method: keyof Ledger) => (...args: unknown[]) => {
      current.close();
      current = EmbeddedLedger.open({ dir });
      return (current[method] as (...args: unknown[]) => unknown)(...args);
    },
  });
  return {
    ledger: reopening,
    stored: async (pk) => logLines(join(dir, 'ledger.jsonl'), pk),
    close: () => {
      current.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
