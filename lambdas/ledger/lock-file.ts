import { closeSync, linkSync, openSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { processLives, processStartOf } from '../shared/process-lives.js';

/** Lock files this process holds: a lock naming our pid that is not here is a stale one from an earlier process with the same pid. */
const held = new Set<string>();

/** Who holds a lock, as its file says: the process, and the command it runs when it named one (a savepoint command does). */
export interface LockHolder {
  readonly pid: number;
  readonly command?: string;
  readonly startedAt?: string;
  /** When the process started, as the system says (processStartOf): what tells it from a later process given the same pid. */
  readonly processStart?: string;
}

/** The lock is held by another live process: its holder, so that whoever is kept out can say by whom. */
export class LockHeldError extends Error {
  override readonly name = 'LockHeldError';
  constructor(
    readonly path: string,
    readonly holder: LockHolder,
  ) {
    const command = holder.command === undefined ? '' : ` (\`savepoint ${holder.command}\`)`;
    super(`${path}: the ledger is in use by process ${holder.pid}${command}; stop it (or reach it through the engine it runs), or delete this file if that process is not a savepoint`);
  }
}

/** This process's start (processStartOf), read from /proc once: it never changes while the process lives, and a ledger opened again and again (a replay's, a test's) read it each time. */
let ownStart: { value: string | undefined } | undefined;
const ownProcessStart = (): string | undefined => (ownStart ??= { value: processStartOf(process.pid) }).value;

/**
 * An exclusive lock on a state directory: only one process may open it.
 *
 * The lock is a file holding the owner's pid (its first line; then a line of JSON: the command,
 * when the owner names one, and when it started; on Linux when the process started, as the system
 * counts it), created exclusively. It is written to a private
 * temporary file first and then hard-linked into place (`link` fails with EEXIST like
 * `open(path, 'wx')` does), so the lock never exists without its pid: an empty or unreadable lock
 * can only be debris. A lock whose process is gone is stale and taken over, with a note: gone, or
 * its pid given since to another process (a restart, a container started again), which started at
 * another time than the lock says.
 *
 * Known limits: two processes taking over the same stale lock in the same instant can both
 * succeed (each removes the stale file, then one of them may remove the other's fresh one). Without
 * /proc (macOS), or for a lock an older savepoint wrote, a reused pid can still make a stale lock
 * look live: the error names the file to delete.
 */
export class LockFile {
  private constructor(
    readonly path: string,
    private released = false,
  ) {}

  /** Takes the lock, naming `command` in it (the savepoint command this process runs); a LockHeldError when another live process holds it. */
  static acquire(path: string, onNote: (note: string) => void = () => {}, command?: string): LockFile {
    const processStart = ownProcessStart();
    const said = { ...(command !== undefined && { command, startedAt: new Date().toISOString() }), ...(processStart !== undefined && { processStart }) };
    const text = Object.keys(said).length === 0 ? `${process.pid}\n` : `${process.pid}\n${JSON.stringify(said)}\n`;
    for (let attempt = 0; attempt < 3; attempt++) {
      if (tryCreate(path, text)) {
        held.add(path);
        return new LockFile(path);
      }
      const holder = readHolder(path);
      if (holder === 'gone') continue;
      if (holder?.pid === process.pid && held.has(path)) {
        throw new Error(`${path}: the ledger is already open in this process; share that instance instead of opening it again`);
      }
      const pidLives = holder !== undefined && holder.pid !== process.pid && processLives(holder.pid);
      if (pidLives && sameProcess(holder)) throw new LockHeldError(path, holder);
      const why = holder === undefined ? ' with no readable pid' : ` of process ${holder.pid}, which is gone${pidLives ? ' (its pid names a process started since)' : ''}`;
      onNote(`${path}: took over a stale lock${why}`);
      removeIfPresent(path);
    }
    throw new Error(`${path}: could not take the lock (another process keeps taking it)`);
  }

  /** Removes the lock if it is still ours. */
  release(): void {
    if (this.released) return;
    this.released = true;
    held.delete(this.path);
    const holder = readHolder(this.path);
    if (holder !== 'gone' && holder?.pid === process.pid) removeIfPresent(this.path);
  }
}

function tryCreate(path: string, text: string): boolean {
  const temporary = `${path}.${process.pid}.tmp`;
  const fd = openSync(temporary, 'w', 0o600); // private, like every file of a state directory
  try {
    writeSync(fd, text);
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

/**
 * Who a lock names: its pid, and the command when it says; `undefined` when it names no pid,
 * `'gone'` when the lock was just removed. A lock of an older savepoint holds the pid alone.
 */
function readHolder(path: string): LockHolder | undefined | 'gone' {
  let lines: string[];
  try {
    lines = readFileSync(path, 'utf8').split('\n');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error;
  }
  const pid = Number.parseInt(lines[0]!.trim(), 10);
  if (!(Number.isSafeInteger(pid) && pid > 0)) return undefined;
  return { pid, ...commandOf(lines[1] ?? '') };
}

/** The command, its start and its process's start a lock's second line names; nothing when it names none it can be taken at. */
function commandOf(line: string): { command?: string; startedAt?: string; processStart?: string } {
  try {
    const { command, startedAt, processStart } = JSON.parse(line) as { command?: unknown; startedAt?: unknown; processStart?: unknown };
    return { ...(typeof command === 'string' && { command }), ...(typeof startedAt === 'string' && { startedAt }), ...(typeof processStart === 'string' && { processStart }) };
  } catch {
    return {};
  }
}

/** Whether the live process with the holder's pid is the one that took the lock: yes unless both starts are known and differ. */
function sameProcess(holder: LockHolder): boolean {
  if (holder.processStart === undefined) return true;
  const now = processStartOf(holder.pid);
  return now === undefined || now === holder.processStart;
}

function removeIfPresent(path: string): void {
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
