import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { inject } from 'vitest';
import { whenChanged } from './when-changed.js';

const exec = promisify(execFile);
const ROOT = new URL('../..', import.meta.url).pathname;
/** Held while one test process packs: `npm pack` runs prepack (bin/build.js), which empties dist/ and compiles it again. */
const LOCK = join(ROOT, 'node_modules', '.cache', 'savepoint-pack.lock');

/** Whether the process that holds the lock is gone (a test process killed mid-pack leaves its lock behind). */
function heldByTheDead(): boolean {
  try {
    process.kill(Number(readFileSync(join(LOCK, 'pid'), 'utf8')), 0);
    return false;
  } catch (error) {
    // No pid yet (ENOENT) is a lock being taken this instant: held, not dead.
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Takes the lock, waiting (on the lock's directory's changes, no timer) while another process holds it. */
async function lock(): Promise<void> {
  await whenChanged(join(LOCK, '..'), () => {
    try {
      mkdirSync(LOCK);
      writeFileSync(join(LOCK, 'pid'), String(process.pid));
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Removing a dead holder's lock is a change of the directory: it wakes the next attempt.
      if (heldByTheDead()) rmSync(LOCK, { recursive: true, force: true });
      return false;
    }
  });
}

/**
 * The repository packed by `npm pack`, copied into `destination`: the tarball's path. Packed once a
 * run (prepack compiles the whole of dist/ and synthesizes its templates, about a minute of CPU):
 * the first caller packs into the run's directory (test/support/run-dir.ts) and the next ones copy
 * that tarball. One pack at a time across the test processes (package-app and own-agent each
 * install the package): two prepacks at once empty dist/ under each other's compiler and one fails.
 */
export async function packRepository(destination: string, timeoutMs: number): Promise<string> {
  // Without the global setup (another config), no sharing: packed for this caller alone.
  const runDir = inject('runDir') ?? destination;
  await lock();
  try {
    const packed = readdirSync(runDir).find((name) => name.endsWith('.tgz'));
    const tarball = packed ? join(runDir, packed) : await pack(runDir, timeoutMs);
    if (runDir === destination) return tarball;
    const copy = join(destination, tarball.slice(runDir.length + 1));
    copyFileSync(tarball, copy);
    return copy;
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

async function pack(destination: string, timeoutMs: number): Promise<string> {
  const { stdout } = await exec('npm', ['pack', '--silent', '--pack-destination', destination], { cwd: ROOT, timeout: timeoutMs });
  return join(destination, stdout.trim().split('\n').at(-1)!);
}
