import { mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { freemem, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A directory that lives as long as this `vitest run`: what its test files make once and share (test/support/pack.ts). */
    runDir: string;
  }
}

/** The tmpfs this run's temporary files go to (below), and the room it must have free for them. */
const MEMORY_TEMP = '/dev/shm';
const ROOM_BYTES = 8 * 1024 ** 3;

/**
 * Where this run's temporary files go: the OS's temp directory, or, when TMPDIR is not set and
 * /dev/shm is a tmpfs with 8 GB free (and the machine 8 GB of memory free), /dev/shm. Two files
 * install the packed package with `npm install` (the own-agent test's app is some 34,500 files)
 * and remove it, beside the other tests' state directories. On a disk file system each new inode
 * is searched for, and on an ext4 without a journal (this VM's root) the search skips every inode
 * freed in the last minutes (perf: ext4's recently_deleted): that install took 25-28 s of system
 * CPU on /tmp against 7 s on /dev/shm. The tests do the same on either; only the kernel's work
 * differs. The caches kept in the temp directory between runs (the template's, tsx's, the step
 * bundles') are then in /dev/shm's, which a reboot empties. Set TMPDIR to choose.
 */
function tempBase(): string {
  if (process.env.TMPDIR !== undefined) return tmpdir();
  try {
    const fs = statfsSync(MEMORY_TEMP);
    // TMPFS_MAGIC: a memory file system, not a disk mounted there; its pages are memory, so as much must be free.
    if (fs.type === 0x01021994 && fs.bavail * fs.bsize >= ROOM_BYTES && freemem() >= ROOM_BYTES) return MEMORY_TEMP;
  } catch {
    // No /dev/shm (macOS, Windows): the OS's temp.
  }
  return tmpdir();
}

/**
 * vitest's global setup (vitest.config.ts): a directory for the whole run, removed at its end. What
 * is kept there is made by the first test that needs it, from the sources as they are during this
 * run, so nothing in it can be stale and a run of one file makes only what that file uses. The
 * run's temporary directory (tempBase) is set here, in vitest's process, before it starts the
 * workers: they, and the processes they start, inherit it.
 */
export default function setup(project: TestProject): () => void {
  process.env.TMPDIR = tempBase();
  const dir = mkdtempSync(join(tmpdir(), 'savepoint-test-run-'));
  project.provide('runDir', dir);
  return () => rmSync(dir, { recursive: true, force: true });
}
