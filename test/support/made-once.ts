import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inject } from 'vitest';
import { processLives } from '../../lambdas/shared/process-lives.js';
import { whenChanged } from './when-changed.js';

/** Whether the process that took `lock` is gone (a test process killed while making leaves its lock behind). */
function heldByTheDead(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    return false; // no pid yet: a lock being taken this instant, held
  }
  return !processLives(pid);
}

/**
 * What `make` returns, made once a run for every test file that asks for it by `name`, in whichever
 * worker: the first caller makes it and keeps it as JSON in the run's directory
 * (test/support/run-dir.ts); a caller that asks meanwhile waits for it (a lock directory, watched:
 * no timer), and the others read it. For what costs seconds of CPU and is the same for every file
 * (a synthesized app's templates): each file reads its own copy, so none can change what another
 * sees. The value must survive JSON as it is. Without the run's directory (another config), made
 * for this caller alone.
 */
export async function madeOnceARun<T>(name: string, make: () => Promise<T>): Promise<T> {
  const runDir = inject('runDir');
  if (runDir === undefined) return make();
  const file = join(runDir, `${name}.json`);
  const lock = join(runDir, `${name}.making`);
  let mine = false;
  await whenChanged(runDir, () => {
    if (existsSync(file)) return true;
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      mine = true;
      return true;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      // Removing a dead maker's lock is a change of the directory: it wakes the next look.
      if (heldByTheDead(lock)) rmSync(lock, { recursive: true, force: true });
      return false;
    }
  });
  if (!mine) return JSON.parse(readFileSync(file, 'utf8')) as T;
  try {
    const value = await make();
    // Written under another name and renamed: a reader never sees half of it.
    writeFileSync(`${file}.draft`, JSON.stringify(value));
    renameSync(`${file}.draft`, file);
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } finally {
    // A maker that failed leaves no file: the next caller makes it.
    rmSync(lock, { recursive: true, force: true });
  }
}
