import { z } from 'zod';
/**
 * One process at a time owns a state directory: the on-disk DynamoDB (dynalite) and the provider's
 * journal may be opened by one process only (a second one crashes, e.g. `Database is closed`).
 * Ownership is a lock file created exclusively, holding the owner's pid, a random nonce and a
 * loopback endpoint that proves it knows the nonce:
 *
 *   take:    write `owner.lock.<nonce>` (open 'wx'), link it to `owner.lock`: EEXIST → held
 *   held:    the owner is live when its pid runs AND its endpoint proves the lock's nonce: asked
 *            `GET /?challenge=<random>`, it answers HMAC-SHA256(nonce, challenge). A dead pid, or a
 *            live pid that cannot prove it (a reused pid, an unrelated process), is a stale lock:
 *            it is broken and taken
 *   release: remove `owner.lock` if it still holds our nonce
 *
 * Linking a complete file (instead of writing into the exclusively created lock itself) means a
 * reader never sees a lock without its content, even when its owner dies while taking it.
 * A kill -9 leaves the lock behind; the next command finds its pid gone and takes it over.
 *
 * The endpoint never tells the nonce: anyone on this machine can ask it, and whoever knew the nonce
 * could answer for a dead owner from its port (keeping a stale lock "live") or pass for the owner.
 * Only whoever can read the lock (the state directory's owner) can check a proof.
 */
declare const LockFile: z.ZodObject<{
    pid: z.ZodNumber;
    nonce: z.ZodString;
    owner: z.ZodString;
    command: z.ZodString;
    startedAt: z.ZodString;
}, z.core.$strip>;
export type LockFile = z.infer<typeof LockFile>;
export declare const lockFilePath: (stateDir: string) => string;
export interface Ownership {
    readonly nonce: string;
    /** Removes the lock (if it is still ours) and stops answering the nonce. Idempotent. */
    release(): Promise<void>;
}
/**
 * Makes this process the owner of `stateDir` (created when missing), or throws a UsageError that
 * says who owns it, or why the directory cannot be used.
 */
export declare function ownStateDir(stateDir: string, command: string, options?: {
    probeTimeoutMs?: number;
}): Promise<Ownership>;
/** The live owner of `stateDir`, or undefined when nobody (or only a stale lock) holds it. */
export declare function liveOwner(stateDir: string): Promise<LockFile | undefined>;
/** The sentence a command gets when another process owns the state directory. */
export declare function busyMessage(stateDir: string, lock: LockFile): string;
/**
 * Whether the process named by a lock still owns it. A pid alone is not enough: after a restart
 * or a reused pid, a stale lock can name a live, unrelated process. So the owner must also answer
 * the lock's nonce on its loopback endpoint. An owner that is alive but too busy to answer in time
 * (e.g. synthesizing the stack) is taken to be live: a live lock is never broken on a guess.
 */
export declare function isLive(lock: LockFile, timeoutMs?: number): Promise<{
    live: boolean;
    why: string;
}>;
/** The proof an owner gives for `challenge`: only who knows the nonce can make it, and it tells nothing of the nonce. */
export declare function ownerProof(nonce: string, challenge: string): string;
/**
 * Refuses a state directory another user can write (a UsageError naming the entry), and makes our
 * own readable files private again (local/state/private-state.ts). Every command checks it before it
 * reads anything there: engine.json names the endpoints the command then trusts.
 */
export declare function checkStateDir(stateDir: string, check?: (stateDir: string) => void): void;
export {};
