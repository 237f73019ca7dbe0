import { type Stats } from 'node:fs';
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
export declare const PRIVATE_DIR_MODE = 448;
export declare const PRIVATE_FILE_MODE = 384;
/** Thrown when a state directory cannot be trusted; its message names the path and the fix. */
export declare class UnsafeStateError extends Error {
    readonly name = "UnsafeStateError";
}
/**
 * Checks `stateDir` and everything in it as described above, making our own readable entries
 * private. Throws UnsafeStateError naming the first entry another user can write. A directory that
 * does not exist yet passes (whoever creates it makes it private: `makePrivateDir`).
 */
export declare function checkPrivateState(stateDir: string): void;
/**
 * Refuses (UnsafeStateError naming it) a state directory reached through another user's symbolic
 * link: the path itself or any directory above it. Whoever owns the link chooses, at any moment,
 * which directory it is (one of ours they want written, or one they swap in), so its target's
 * owner proves nothing. Checked before anything is created through the path.
 */
export declare function refuseForeignLinks(stateDir: string): void;
/**
 * The first symbolic link on `path` (itself, then each directory above it) that another user
 * owns, or undefined. Root's links (a system's /var/run, macOS's /tmp) are trusted as root itself
 * is; where there are no user ids (Windows) no link is judged.
 */
export declare function foreignLink(path: string): {
    path: string;
    uid: number;
} | undefined;
/**
 * Who besides the current user can write an entry with these stats, in words for a message
 * (`is owned by another user (uid 1001)`, `can be written by other users (mode 777)`); undefined
 * when nobody else can (root aside). Where there are no user ids (Windows), ownership is not judged.
 */
export declare function otherWriters(stats: Pick<Stats, 'uid' | 'mode'>): string | undefined;
