import { chmodSync, existsSync, lstatSync, readdirSync, statSync, type Stats } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

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
  refuseForeignLinks(stateDir);
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
    if ((stats.mode & 0o077) !== 0) makePrivate(path, stats, (stats.mode & 0o700) | (wanted & 0o700), stateDir);
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
 * Makes one of our entries private, or refuses the state directory (UnsafeStateError naming the
 * entry, why and what to do) when it cannot be: a directory that is read-only to us (immutable,
 * on a file system that refuses chmod) would otherwise stay readable by others.
 */
function makePrivate(path: string, stats: Stats, mode: number, stateDir: string): void {
  try {
    chmodSync(path, mode);
  } catch (error) {
    const code = (error as { code?: string }).code;
    const why = code === 'EPERM' || code === 'EACCES' ? 'changing its mode is not permitted' : code === 'EROFS' ? 'the file system is read-only' : (error as Error).message;
    throw new UnsafeStateError(
      `${path} can be read by other users (mode ${(stats.mode & 0o777).toString(8)}) and cannot be made private here (${why}): a state directory must be private to its owner; make it changeable again (it may be immutable, or on a read-only mount), then \`chmod -R go-rwx ${stateDir}\`, or use another --state-dir`,
      { cause: error },
    );
  }
}

/**
 * Refuses (UnsafeStateError naming it) a state directory reached through another user's symbolic
 * link: the path itself or any directory above it. Whoever owns the link chooses, at any moment,
 * which directory it is (one of ours they want written, or one they swap in), so its target's
 * owner proves nothing. Checked before anything is created through the path.
 */
export function refuseForeignLinks(stateDir: string): void {
  const link = foreignLink(stateDir);
  if (link) {
    throw new UnsafeStateError(`${link.path} is a symbolic link owned by another user (uid ${link.uid}): a state directory is not reached through another user's link; remove it, or pass --state-dir the directory itself`);
  }
}

/**
 * The first symbolic link on `path` (itself, then each directory above it) that another user
 * owns, or undefined. Root's links (a system's /var/run, macOS's /tmp) are trusted as root itself
 * is; where there are no user ids (Windows) no link is judged.
 */
export function foreignLink(path: string): { path: string; uid: number } | undefined {
  const uid = process.getuid?.();
  if (uid === undefined) return undefined;
  for (let current = resolve(path); ; current = dirname(current)) {
    const stats = linkStats(current);
    if (stats?.isSymbolicLink() && stats.uid !== uid && stats.uid !== 0) return { path: current, uid: stats.uid };
    if (dirname(current) === current) return undefined;
  }
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

/** A path's own stats; undefined when it cannot be had (missing, under a file, unreachable): then it is no link, and using the path will say why. */
function linkStats(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined;
  }
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
