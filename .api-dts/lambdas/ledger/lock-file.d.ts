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
export declare class LockFile {
    readonly path: string;
    private released;
    private constructor();
    static acquire(path: string, onNote?: (note: string) => void): LockFile;
    /** Removes the lock if it is still ours. */
    release(): void;
}
