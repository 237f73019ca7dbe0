import { createHmac, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync, closeSync } from 'node:fs';
import { nodeHttp } from '../lambdas/shared/node-http.js';
import type { AddressInfo } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { createLoopbackServer } from '../lambdas/shared/loopback-server.js';
import { processLives } from '../lambdas/shared/process-lives.js';
import { sameSecret } from '../lambdas/shared/same-secret.js';
import { checkPrivateState, PRIVATE_DIR_MODE, refuseForeignLinks, UnsafeStateError } from '../local/state/private-state.js';
import { describe, UsageError } from './errors.js';
import { schemaOnFirstUse } from '../lambdas/shared/on-first-use.js';

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

const LockFile = schemaOnFirstUse(() =>
  z.object({
    pid: z.number().int().positive(),
    nonce: z.string().min(16),
    /** Loopback URL that answers `{ nonce }` while the owner lives. */
    owner: z.string().url(),
    /** The savepoint command that holds it (`run`, `status`, …), for the message a second one gets. */
    command: z.string(),
    startedAt: z.string(),
  }),
);
export type LockFile = z.infer<ReturnType<typeof LockFile>>;

export const lockFilePath = (stateDir: string) => join(stateDir, 'owner.lock');

/** Nonces of the locks this process holds. */
const ours = new Set<string>();

export interface Ownership {
  readonly nonce: string;
  /** Removes the lock (if it is still ours) and stops answering the nonce. Idempotent. */
  release(): Promise<void>;
}

/**
 * Makes this process the owner of `stateDir` (created when missing), or throws a UsageError that
 * says who owns it, or why the directory cannot be used.
 */
export async function ownStateDir(stateDir: string, command: string, options: { probeTimeoutMs?: number } = {}): Promise<Ownership> {
  checkStateDir(stateDir, refuseForeignLinks); // before anything is created through the path
  prepareDirectory(stateDir);
  checkStateDirOnce(stateDir);
  const nonce = randomBytes(16).toString('hex');
  const endpoint = await answerNonce(nonce);
  ours.add(nonce);
  const lock: LockFile = { pid: process.pid, nonce, owner: endpoint.url, command, startedAt: new Date().toISOString() };
  try {
    await takeLock(stateDir, lock, options.probeTimeoutMs);
  } catch (error) {
    ours.delete(nonce);
    await endpoint.close();
    throw error;
  }
  let released: Promise<void> | undefined;
  return {
    nonce,
    release: () =>
      (released ??= (async () => {
        if (readLockQuietly(lockFilePath(stateDir))?.nonce === nonce) rmSync(lockFilePath(stateDir), { force: true });
        ours.delete(nonce);
        await endpoint.close();
      })()),
  };
}

/** The live owner of `stateDir`, or undefined when nobody (or only a stale lock) holds it. */
export async function liveOwner(stateDir: string): Promise<LockFile | undefined> {
  const lock = readLock(lockFilePath(stateDir));
  return lock && (await isLive(lock)).live ? lock : undefined;
}

/** The sentence a command gets when another process owns the state directory. */
export function busyMessage(stateDir: string, lock: Pick<LockFile, 'pid' | 'command'> & { startedAt?: string }, asking?: string): string {
  const who = `\`savepoint ${lock.command}\` (pid ${lock.pid}${lock.startedAt === undefined ? '' : `, since ${lock.startedAt}`})`;
  // One engine per state directory: a second serve is pointed at the first, which serves every run of it.
  if (lock.command === 'serve' && asking === 'serve') {
    return `the state directory ${stateDir} is already served by ${who}: its runs API takes every run (its address and credential are in ${join(stateDir, 'engine.json')}); stop it first, or pass another --state-dir`;
  }
  return lock.command === 'run' || lock.command === 'resume' || lock.command === 'serve'
    ? `the state directory ${stateDir} is in use by ${who}: the other commands (status, approve, …) reach its engine once it has started, or pass another --state-dir`
    : `the state directory ${stateDir} is in use by ${who}: try again when it has finished`;
}

async function takeLock(stateDir: string, lock: LockFile, probeTimeoutMs?: number): Promise<void> {
  const path = lockFilePath(stateDir);
  // Each pass either takes the lock, refuses (a live owner), or breaks one stale lock; a few
  // passes are enough unless other processes keep taking it.
  for (let pass = 0; pass < 5; pass++) {
    if (createExclusively(path, lock)) return;
    const held = readLock(path);
    if (!held) continue; // released between our create and our read
    const verdict = await isLive(held, probeTimeoutMs);
    if (verdict.live) throw new UsageError(busyMessage(stateDir, held, lock.command));
    breakStaleLock(path, held, lock.nonce);
  }
  throw new UsageError(`could not take ${path}: other processes keep taking it; try again`);
}

/** Creates `path` holding `lock`, atomically and only if it does not exist. False when it exists. */
function createExclusively(path: string, lock: LockFile): boolean {
  const draft = `${path}.${lock.nonce}`;
  try {
    const fd = openSync(draft, 'wx', 0o600);
    try {
      writeSync(fd, JSON.stringify(lock));
    } finally {
      closeSync(fd);
    }
    linkSync(draft, path);
    return true;
  } catch (error) {
    if (codeOf(error) === 'EEXIST') return false;
    throw new UsageError(`cannot write to the state directory ${dirname(path)}: ${describe(error)}`);
  } finally {
    rmSync(draft, { force: true });
  }
}

/**
 * Removes a stale lock — unless another process broke it and took the lock in the meantime: the
 * lock is moved aside first, and put back when what was moved is not the stale one.
 */
function breakStaleLock(path: string, stale: LockFile, nonce: string): void {
  const aside = `${path}.stale-${nonce}`;
  try {
    renameSync(path, aside);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return; // someone else broke it
    throw error;
  }
  const moved = readLockQuietly(aside);
  if (moved && moved.nonce !== stale.nonce) {
    try {
      linkSync(aside, path); // a fresh lock: it wins, and the next pass finds it live
    } catch {
      // a third process took the lock meanwhile: it wins instead
    }
  }
  rmSync(aside, { force: true });
}

/** The lock at `path`; undefined when there is none; a UsageError naming the file when it is not a lock. */
function readLock(path: string): LockFile | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return undefined;
    throw new UsageError(`cannot read the lock ${path}: ${describe(error)}`);
  }
  const parsed = LockFile().safeParse(parseJson(text));
  if (!parsed.success) throw new UsageError(`${path} is not a savepoint lock file; remove it if no savepoint command is running on ${dirname(path)}`);
  return parsed.data;
}

/** The lock at `path` if it is one; undefined otherwise (when releasing, damage is not ours to judge). */
function readLockQuietly(path: string): LockFile | undefined {
  try {
    return readLock(path);
  } catch {
    return undefined;
  }
}

/**
 * Whether the process named by a lock still owns it. A pid alone is not enough: after a restart
 * or a reused pid, a stale lock can name a live, unrelated process. So the owner must also answer
 * the lock's nonce on its loopback endpoint. An owner that is alive but too busy to answer in time
 * (e.g. synthesizing the stack) is taken to be live: a live lock is never broken on a guess.
 */
export async function isLive(lock: LockFile, timeoutMs = 3_000): Promise<{ live: boolean; why: string }> {
  if (ours.has(lock.nonce)) return { live: true, why: 'held by this process' };
  if (lock.pid === process.pid) return { live: false, why: `pid ${lock.pid} is this process, which did not take it` };
  if (!processLives(lock.pid)) return { live: false, why: `pid ${lock.pid} is not running` };
  const challenge = randomBytes(16).toString('hex');
  const answer = await askOwner(lock.owner, challenge, timeoutMs);
  if (answer === 'timeout') return { live: true, why: `pid ${lock.pid} runs and did not answer in time` };
  if (answer?.proof !== undefined && sameSecret(answer.proof, ownerProof(lock.nonce, challenge))) return { live: true, why: `pid ${lock.pid} proved the lock's nonce` };
  // An owner of an older savepoint answers the nonce itself: still live (breaking its lock would open its ledger twice).
  if (answer?.nonce !== undefined && sameSecret(answer.nonce, lock.nonce)) return { live: true, why: `pid ${lock.pid} answered the lock's nonce` };
  return { live: false, why: `pid ${lock.pid} runs but does not prove the lock's nonce: an unrelated process` };
}

/** The proof an owner gives for `challenge`: only who knows the nonce can make it, and it tells nothing of the nonce. */
export function ownerProof(nonce: string, challenge: string): string {
  return createHmac('sha256', nonce).update(`savepoint owner lock\0${challenge}`).digest('hex');
}

const CHALLENGE = /^[0-9a-f]{32}$/;

/** What the endpoint answers the challenge with (a proof; an older owner's nonce); undefined when it refuses or answers nothing of the kind. */
function askOwner(url: string, challenge: string, timeoutMs: number): Promise<{ proof?: string; nonce?: string } | undefined | 'timeout'> {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return Promise.resolve(undefined);
  }
  target.searchParams.set('challenge', challenge);
  return new Promise((resolve) => {
    const request = nodeHttp().get(target, { agent: false, timeout: timeoutMs }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => {
        const answer = parseJson(body) as { proof?: unknown; nonce?: unknown } | undefined;
        resolve({ ...(typeof answer?.proof === 'string' && { proof: answer.proof }), ...(typeof answer?.nonce === 'string' && { nonce: answer.nonce }) });
      });
      response.on('error', () => resolve(undefined));
    });
    request.on('timeout', () => {
      request.destroy();
      resolve('timeout');
    });
    request.on('error', () => resolve(undefined)); // refused: nobody listens there any more
  });
}

/** The owner's loopback endpoint. Unreferenced: it never keeps the process alive by itself. */
async function answerNonce(nonce: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createLoopbackServer((request, response) => {
    const answer = (status: number, body: unknown) => void response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    // It answers a challenge and takes nothing: any other request than `GET /?challenge=` is refused.
    let url: URL;
    try {
      url = new URL(request.url ?? '/', 'http://owner.invalid');
    } catch {
      return answer(400, { message: 'not a request target' });
    }
    if (request.method !== 'GET' || url.pathname !== '/') return answer(405, { message: 'only GET /?challenge=<32 hex digits> is served here' });
    const challenge = url.searchParams.get('challenge') ?? '';
    if (!CHALLENGE.test(challenge) || [...url.searchParams.keys()].length !== 1) return answer(400, { message: 'challenge: 32 hex digits, and nothing else' });
    answer(200, { pid: process.pid, proof: ownerProof(nonce, challenge) });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Makes sure `path` is a directory, creating it (and its parents) when missing, or throws a
 * UsageError in one sentence. Not `mkdirSync({ recursive: true })`: under /proc it loops forever.
 */
function prepareDirectory(path: string): void {
  const kind = kindOf(path);
  if (kind === 'directory') return;
  if (kind === 'file') throw new UsageError(`the state directory ${path} is a file, not a directory; pass --state-dir <a directory>`);
  const parent = dirname(path);
  if (parent !== path && kindOf(parent) === 'missing') prepareDirectory(parent);
  try {
    mkdirSync(path, { mode: PRIVATE_DIR_MODE }); // its parents too: a new tree is private all the way down
  } catch (error) {
    if (codeOf(error) === 'EEXIST' && kindOf(path) === 'directory') return;
    throw new UsageError(`cannot create the state directory ${path}: ${describe(error)}`);
  }
}

/**
 * Refuses a state directory another user can write (a UsageError naming the entry), and makes our
 * own readable files private again (local/state/private-state.ts). Every command checks it before it
 * reads anything there: engine.json names the endpoints the command then trusts.
 */
export function checkStateDir(stateDir: string, check: (stateDir: string) => void = checkPrivateState): void {
  try {
    check(stateDir);
  } catch (error) {
    if (error instanceof UnsafeStateError) throw new UsageError(error.message);
    throw error;
  }
}

/**
 * The state directories this process has walked and found private, each with the identity
 * (device and inode) of the directory it walked.
 */
const walked = new Map<string, string>();

/**
 * `checkStateDir` for the checks a command makes one after another on the same directory (whether
 * an engine runs on it, then its lock): the walk of every entry is made once a process. Once a walk
 * passed, the directory is its owner's and 0700 (or, not a state directory, writable by nobody
 * else), so no other user (root aside) can add, rename or replace an entry in it while this
 * process lives; a directory swapped in at the same path has another inode and is walked. What
 * this process creates there it makes private where it creates it, and `run` and `serve` walk
 * again (checkStateDir) once their stack has opened the directory and after it closes. A walk
 * costs a stat of every entry: about 7 ms at 150 runs (the cold store's files, up to 256), made
 * three times by `status`, `runs` and `approvals` before this.
 */
export function checkStateDirOnce(stateDir: string): void {
  checkStateDir(stateDir, (dir) => {
    const path = resolve(dir);
    const identity = identityOf(path);
    // Walked already: only the links on its path again (cheap, and one may have changed).
    if (identity !== undefined && walked.get(path) === identity) return refuseForeignLinks(dir);
    checkPrivateState(dir); // links first, then every entry
    // A directory that did not exist was not walked: whoever creates it walks it after (ownStateDir).
    if (identity !== undefined) walked.set(path, identity);
  });
}

function identityOf(path: string): string | undefined {
  try {
    const { dev, ino } = statSync(path);
    return `${dev}:${ino}`;
  } catch {
    return undefined;
  }
}

function kindOf(path: string): 'directory' | 'file' | 'missing' {
  try {
    return statSync(path).isDirectory() ? 'directory' : 'file';
  } catch {
    return 'missing'; // or unreachable (ENOTDIR, EACCES): creating it will say why
  }
}

function codeOf(error: unknown): string | undefined {
  return (error as { code?: string } | undefined)?.code;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
