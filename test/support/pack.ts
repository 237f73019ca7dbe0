import { execFile } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
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
 * The repository packed by `npm pack` into `destination`, the tarball's path. One pack at a time
 * across the test processes (package-app and own-agent each install the package): two prepacks at
 * once empty dist/ under each other's compiler and one fails.
 */
export async function packRepository(destination: string, timeoutMs: number): Promise<string> {
  await lock();
  try {
    const { stdout } = await exec('npm', ['pack', '--silent', '--pack-destination', destination], { cwd: ROOT, timeout: timeoutMs });
    return join(destination, stdout.trim().split('\n').at(-1)!);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}
