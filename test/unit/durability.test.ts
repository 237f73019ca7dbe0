/**
 * What a power loss leaves of the embedded ledger on disk (LocalStackOptions.durability, README
 * "Durability"). The page cache cannot be dropped here, so the cut is simulated from the system
 * calls themselves: every fdatasync/fsync the ledger makes is watched (lambdas/ledger/file-sync.ts), and
 * at the cut each file goes back to what it held at its last sync — the rest was in the page
 * cache, which a power loss takes — and a write in flight leaves half a line torn at the log's end.
 * `sync` must lose nothing it acknowledged; `async` may (that is its trade, stated in the README).
 */
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { fileSync } from '../../lambdas/ledger/file-sync.js';
import { runRecord } from '../support/records.js';

/** Each file's bytes as of its last fdatasync/fsync: what a power loss leaves of it. */
const disk = { synced: new Map<string, Buffer>(), syncs: 0 };
const real = { ...fileSync };
/** Every sync the ledger makes (lambdas/ledger/file-sync.ts), watched: the file's bytes as the disk now holds them. */
const watched = (sync: (fd: number) => void) => (fd: number) => {
  sync(fd);
  disk.syncs += 1;
  const path = readlinkSync(`/proc/self/fd/${fd}`);
  if (statSync(path).isFile()) disk.synced.set(path, readFileSync(path));
};

const at = '2026-11-29T02:00:00.000Z';
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'savepoint-durability-'));
  disk.synced.clear();
  disk.syncs = 0;
  fileSync.data = watched(real.data);
  fileSync.full = watched(real.full);
});
afterEach(() => {
  Object.assign(fileSync, real);
  rmSync(dir, { recursive: true, force: true });
});

/** Every file under the ledger's directory, by path. */
function files(root = dir): string[] {
  return readdirSync(root).flatMap((name) => {
    const path = join(root, name);
    return statSync(path).isDirectory() ? files(path) : [path];
  });
}

/** The state the test starts from, taken as on the disk (the ledger made and closed, its key and files synced). */
function settleAll(): void {
  for (const path of files()) disk.synced.set(path, readFileSync(path));
}

/** The power goes out: each file back to its last sync (a file never synced, gone), and the write in flight torn. */
function cutPower(): void {
  for (const path of files()) {
    const kept = disk.synced.get(path);
    if (kept) writeFileSync(path, kept);
    else rmSync(path);
  }
  appendFileSync(join(dir, 'ledger.jsonl'), '{"pk":"RUN#r1","sk":"STEP#turn:99","rec');
}

/** A run, then `writes` acknowledged step counts, the process and the power gone right after the last. */
async function acknowledged(fsync: boolean, writes: number): Promise<void> {
  EmbeddedLedger.open({ dir, onNote: () => undefined }).close();
  settleAll();
  const ledger = EmbeddedLedger.open({ dir, fsync, onNote: () => undefined });
  await ledger.createRun(runRecord({ runId: 'r1', agent: 'a', input: {}, executionArn: 'arn:1', createdAt: at, updatedAt: at }));
  for (let turn = 1; turn <= writes; turn++) await ledger.countStep('r1', `turn:${turn}`, { steps: 1 });
  // No close: the process died with the power (its lock and index are whatever the disk kept).
  cutPower();
}

describe('a power loss after acknowledged writes', () => {
  it('loses nothing acknowledged with durability sync: the log and its head are on the disk before each write returns', async () => {
    await acknowledged(true, 5);
    expect(disk.syncs).toBeGreaterThanOrEqual(12); // the run and 5 counts: the log and the head, each
    const notes: string[] = [];
    const reopened = EmbeddedLedger.open({ dir, onNote: (note) => notes.push(note) });
    expect(await reopened.getRun('r1')).toMatchObject({ steps: 5 });
    // The torn line of the write in flight (never acknowledged) is cut, with a note.
    expect(notes).toContainEqual(expect.stringMatching(/dropped a torn last line/));
    reopened.close();
  });

  it('may lose the last acknowledged writes with durability async (the default): what sync is for', async () => {
    await acknowledged(false, 5);
    // The run was acknowledged, and is gone: no write of it reached the disk.
    const reopened = EmbeddedLedger.open({ dir, onNote: () => undefined });
    expect(await reopened.getRun('r1')).toBeUndefined();
    reopened.close();
  });
});
