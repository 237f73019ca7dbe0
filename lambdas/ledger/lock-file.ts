import { closeSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { processLives } from '../shared/process-lives.js';

/** Lock files this process holds: a lock naming our pid that is not here is a stale one from an earlier process with the same pid. */
const held = new Set<string>();

/**
 * An exclusive lock on a state directory: only one process may open it.
 *
 * The lock is a file holding the owner's pid, created exclusively. It is written to a private
 * temporary file first and then hard-linked into place (`link` fails with EEXIST like
 * `open(path, 'wx')` does), so the lock never exists without its pid: an empty or unreadable lock
 * can only be debris. A lock whose process is gone is stale and taken over, with a note.
 *
 * Known limit: two processes taking over the same stale lock in the same instant can both
 * succeed (each removes the stale file, then one of them may remove the other's fresh one). A
 * reused pid can also make a stale lock look live: the error names the file to delete.
 */
export class LockFile {
  private constructor(
    readonly path: string,
    private released = false,
  ) {}

  static acquire(path: string, onNote: (note: string) => void = () => {}): LockFile {
    for (let attempt = 0; attempt < 3; attempt++) {
      if (tryCreate(path)) {
        held.add(path);
        return new LockFile(path);
      }
      const holder = readPid(path);
      if (holder === 'gone') continue;
      if (holder === process.pid && held.has(path)) {
        throw new Error(`${path}: the ledger is already open in this process; share that instance instead of opening it again`);
      }
      if (holder !== undefined && holder !== process.pid && processLives(holder)) {
        throw new Error(
          `${path}: the ledger is in use by process ${holder}; stop it (or reach it through the engine it runs), or delete this file if that process is not a savepoint`,
        );
      }
      onNote(`${path}: took over a stale lock${holder === undefined ? ' with no readable pid' : ` of process ${holder}, which is gone`}`);
      removeIfPresent(path);
    }
    throw new Error(`${path}: could not take the lock (another process keeps taking it)`);
  }

  /** Removes the lock if it is still ours. */
  release(): void {
    if (this.released) return;
    this.released = true;
    held.delete(this.path);
    if (readPid(this.path) === process.pid) removeIfPresent(this.path);
  }
}

function tryCreate(path: string): boolean {
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', 0o600); // private, like every file of a state directory
  try {
    writeSync(fd, `${process.pid}\n`);
  } finally {
    closeSync(fd);
  }
  try {
    linkSync(temporary, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  } finally {
    removeIfPresent(temporary);
  }
}

/** The pid a lock names; `undefined` when it names none, `'gone'` when the lock was just removed. */
function readPid(path: string): number | undefined | 'gone' {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10);
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error;
  }
}

function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
