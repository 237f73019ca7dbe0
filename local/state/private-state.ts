import { chmodSync, existsSync, lstatSync, readdirSync, statSync, type Stats } from 'node:fs';
import { join } from 'node:path';

/**
 * A state directory is private to its owner: it holds task tokens, every tool argument and result,
 * the seal and link keys, and engine.json (the loopback endpoints' credentials). So the directory
 * is 0700 and what it holds 0600 (directories 0700), and on every open it is checked:
 *
 *   - a file or directory another user can write (group/other write bit, or owned by another user)
 *     is refused, naming it: whoever can write it can forge what the engine reads or runs;
 *   - our own files that others can only read (left by an older savepoint, or created under a
 *     wide umask) are made private again.
 *
 * The directory's mode alone already shuts other users out of everything inside it; the files'
 * own modes keep them private when copied or moved out.
 */

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** What only a state directory holds (the ledger, its keys, the owner's lock): its entries are savepoint's. */
const STATE_MARKERS = new Set(['owner.lock', 'engine.json', 'ledger.jsonl', 'ledger.head', 'ledger', 'keys']);

/** Thrown when a state directory cannot be trusted; its message names the path and the fix. */
export class UnsafeStateError extends Error {
  override readonly name = 'UnsafeStateError';
}

/**
 * Checks `stateDir` and everything in it as described above, making our own readable entries
 * private. Throws UnsafeStateError naming the first entry another user can write. A directory that
 * does not exist yet passes (whoever creates it makes it private: `makePrivateDir`).
 */
export function checkPrivateState(stateDir: string): void {
  if (!existsSync(stateDir)) return;
  // Only a state directory's entries are ours to judge and to chmod: a directory with other things
  // in it (a home directory passed as --state-dir, a system one) is checked as a directory alone.
  const names = statSync(stateDir).isDirectory() ? readdirSync(stateDir) : [];
  const ours = names.length === 0 || names.some((name) => STATE_MARKERS.has(name));
  const visit = (path: string, stats: Stats) => {
    if (stats.isSymbolicLink()) return; // never followed: a link's target is not ours to judge (or chmod)
    const who = otherWriters(stats);
    if (who) {
      throw new UnsafeStateError(`${path} ${who}: a state directory must be private to its owner; check who changed it, then \`chmod -R go-rwx ${stateDir}\` (or use another --state-dir)`);
    }
    if (!ours) return;
    const wanted = stats.isDirectory() ? PRIVATE_DIR_MODE : PRIVATE_FILE_MODE;
    if ((stats.mode & 0o077) !== 0) chmodSync(path, (stats.mode & 0o700) | (wanted & 0o700));
    if (stats.isDirectory()) {
      for (const name of readdirSync(path)) {
        const entry = statQuietly(join(path, name));
        if (entry) visit(join(path, name), entry);
      }
    }
  };
  visit(stateDir, statSync(stateDir)); // the directory itself may be a link the user made
}

/**
 * Who besides the current user can write an entry with these stats, in words for a message
 * (`is owned by another user (uid 1001)`, `can be written by other users (mode 777)`); undefined
 * when nobody else can (root aside). Where there are no user ids (Windows), ownership is not judged.
 */
export function otherWriters(stats: Pick<Stats, 'uid' | 'mode'>): string | undefined {
  const uid = process.getuid?.();
  if (uid !== undefined && stats.uid !== uid) return `is owned by another user (uid ${stats.uid})`;
  if ((stats.mode & 0o022) !== 0) return `can be written by other users (mode ${(stats.mode & 0o777).toString(8)})`;
  return undefined;
}

/** An entry's own stats; undefined when it went away meanwhile (a running engine renames and removes files). */
function statQuietly(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as { code?: string }).code === 'ENOENT') return undefined;
    throw error;
  }
}
