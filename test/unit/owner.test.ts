import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkStateDir, checkStateDirOnce, lockFilePath, ownerProof, ownStateDir } from '../../cli/owner.js';

const root = mkdtempSync(join(tmpdir(), 'savepoint-owner-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let dirs = 0;
const freshDir = () => join(root, `state-${++dirs}`);

/** A pid that ran and has exited. */
const deadPid = () => spawnSync(process.execPath, ['-e', '']).pid!;

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

/** A URL nobody listens on (a server that listened there has closed). */
async function refusingUrl(): Promise<string> {
  const server = createServer();
  const url = await listen(server);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return url;
}

/** What a process that died (or whose pid was reused) left behind. */
const staleLock = (stateDir: string, fields: { pid: number; owner: string }) => {
  writeFileSync(lockFilePath(stateDir), JSON.stringify({ ...fields, nonce: 'a-stale-nonce-0123456789', command: 'run', startedAt: '2026-11-28T00:00:00Z' }));
};

describe('owning a state directory', () => {
  it('is exclusive: a second owner is refused with who owns it, and may own it once released', async () => {
    const stateDir = freshDir();
    const first = await ownStateDir(stateDir, 'run');
    await expect(ownStateDir(stateDir, 'status')).rejects.toThrow(/is in use by `savepoint run` \(pid \d+, since .*\): the other commands/);
    await first.release();
    expect(existsSync(lockFilePath(stateDir))).toBe(false);
    const second = await ownStateDir(stateDir, 'status');
    await second.release();
  });

  it.each([
    ['a dead pid', async () => ({ pid: deadPid(), owner: await refusingUrl() })],
    ['a live, unrelated pid whose endpoint is gone', async () => ({ pid: process.ppid, owner: await refusingUrl() })],
  ])('takes over a stale lock naming %s', async (_case, lock) => {
    const stateDir = freshDir();
    await (await ownStateDir(stateDir, 'run')).release(); // makes the directory
    staleLock(stateDir, await lock());
    const ownership = await ownStateDir(stateDir, 'run');
    expect(JSON.parse(readFileSync(lockFilePath(stateDir), 'utf8'))).toMatchObject({ pid: process.pid, nonce: ownership.nonce });
    await ownership.release();
  });

  it('takes over a lock whose live pid answers another nonce', async () => {
    const stateDir = freshDir();
    await (await ownStateDir(stateDir, 'run')).release();
    const impostor = createServer((_request, response) => response.end(JSON.stringify({ nonce: 'not-the-lock-nonce' })));
    staleLock(stateDir, { pid: process.ppid, owner: await listen(impostor) });
    try {
      await (await ownStateDir(stateDir, 'run')).release();
    } finally {
      impostor.close();
    }
  });

  it("keeps the lock's nonce to itself: its endpoint answers anyone a proof for their own challenge, never the nonce", async () => {
    const stateDir = freshDir();
    const ownership = await ownStateDir(stateDir, 'run');
    try {
      const lock = JSON.parse(readFileSync(lockFilePath(stateDir), 'utf8')) as { owner: string; nonce: string };
      const ask = async (query: string) => {
        const response = await fetch(`${lock.owner}${query}`);
        return { status: response.status, text: await response.text() };
      };
      const challenge = 'ab'.repeat(16);
      const answers = [await ask(''), await ask(`?challenge=${challenge}`), await ask(`?challenge=${'cd'.repeat(16)}`), await ask('?challenge=short'), await ask(`?challenge=${challenge}&nonce=1`)];
      for (const answer of answers) expect(answer.text).not.toContain(lock.nonce);
      expect(answers.map((answer) => answer.status)).toEqual([400, 200, 200, 400, 400]);
      // What it gives is a proof only a reader of the lock can check, and another for another challenge.
      expect(JSON.parse(answers[1]!.text)).toEqual({ pid: process.pid, proof: ownerProof(lock.nonce, challenge) });
      expect(JSON.parse(answers[2]!.text).proof).not.toBe(JSON.parse(answers[1]!.text).proof);
    } finally {
      await ownership.release();
    }
  });

  it('never breaks the lock of an owner that proves the nonce (in another process), nor one of an older savepoint that answers it', async () => {
    for (const answer of ['proof', 'nonce'] as const) {
      const stateDir = freshDir();
      await (await ownStateDir(stateDir, 'run')).release();
      const nonce = 'a-stale-nonce-0123456789';
      const owner = createServer((request, response) => {
        const challenge = new URL(request.url!, 'http://x').searchParams.get('challenge') ?? '';
        response.end(JSON.stringify(answer === 'proof' ? { proof: ownerProof(nonce, challenge) } : { nonce }));
      });
      staleLock(stateDir, { pid: process.ppid, owner: await listen(owner) });
      try {
        await expect(ownStateDir(stateDir, 'status')).rejects.toThrow(/is in use by `savepoint run`/);
      } finally {
        owner.close();
      }
    }
  });

  it('never breaks the lock of a live owner too busy to answer', async () => {
    const stateDir = freshDir();
    await (await ownStateDir(stateDir, 'run')).release();
    const busy = createServer(() => undefined); // accepts, never answers: an event loop blocked in synthesis
    staleLock(stateDir, { pid: process.ppid, owner: await listen(busy) });
    try {
      await expect(ownStateDir(stateDir, 'status', { probeTimeoutMs: 50 })).rejects.toThrow(/is in use by `savepoint run`/);
      expect(JSON.parse(readFileSync(lockFilePath(stateDir), 'utf8'))).toMatchObject({ nonce: 'a-stale-nonce-0123456789' });
    } finally {
      busy.closeAllConnections();
      busy.close();
    }
  });

  it('lets exactly one of many racers take a stale lock', async () => {
    const stateDir = freshDir();
    await (await ownStateDir(stateDir, 'run')).release();
    staleLock(stateDir, { pid: deadPid(), owner: await refusingUrl() });
    const racers = await Promise.allSettled(Array.from({ length: 8 }, () => ownStateDir(stateDir, 'run')));
    const winners = racers.flatMap((racer) => (racer.status === 'fulfilled' ? [racer.value] : []));
    expect(winners).toHaveLength(1);
    for (const racer of racers) if (racer.status === 'rejected') expect(String(racer.reason)).toMatch(/is in use by `savepoint run`/);
    await winners[0]!.release();
  });

  it('names a damaged lock file instead of guessing', async () => {
    const stateDir = freshDir();
    await (await ownStateDir(stateDir, 'run')).release();
    writeFileSync(lockFilePath(stateDir), '{"pid":');
    await expect(ownStateDir(stateDir, 'run')).rejects.toThrow(`${lockFilePath(stateDir)} is not a savepoint lock file`);
  });

  it('refuses a state directory that is a file, in one sentence', async () => {
    const file = join(root, 'plain-file');
    writeFileSync(file, '');
    await expect(ownStateDir(file, 'run')).rejects.toThrow(/^the state directory .*plain-file is a file, not a directory; pass --state-dir <a directory>$/);
  });
});

describe('checking a state directory once a process', () => {
  /** A state directory (its marker, the ledger's head) with one file in it that others may write. */
  const withWritableFile = (dir: string) => {
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, 'ledger.head'), '', { mode: 0o600 });
    writeFileSync(join(dir, 'notes.json'), '{}', { mode: 0o600 });
    chmodSync(join(dir, 'notes.json'), 0o666);
  };

  it('walks a directory once: an entry changed after the walk is found by a full check only', () => {
    const dir = freshDir();
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(join(dir, 'ledger.head'), '', { mode: 0o600 });
    checkStateDirOnce(dir);
    // Only this process (or root) could change it now: the directory is ours and 0700.
    chmodSync(join(dir, 'ledger.head'), 0o666);
    expect(() => checkStateDirOnce(dir)).not.toThrow();
    expect(() => checkStateDir(dir)).toThrow(/ledger\.head can be written by other users \(mode 666\)/);
  });

  it('refuses an entry others can write at its first check, naming it', () => {
    const dir = freshDir();
    withWritableFile(dir);
    expect(() => checkStateDirOnce(dir)).toThrow(/notes\.json can be written by other users \(mode 666\): a state directory must be private to its owner/);
  });

  it('walks a directory swapped in at the same path', () => {
    const dir = freshDir();
    mkdirSync(dir, { mode: 0o700 });
    checkStateDirOnce(dir);
    renameSync(dir, `${dir}-away`);
    withWritableFile(dir);
    expect(() => checkStateDirOnce(dir)).toThrow(/notes\.json can be written by other users/);
  });

  it('walks a directory that did not exist at its first check once it does', () => {
    const dir = freshDir();
    checkStateDirOnce(dir);
    withWritableFile(dir);
    expect(() => checkStateDirOnce(dir)).toThrow(/notes\.json can be written by other users/);
  });
});
