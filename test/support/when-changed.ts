import { mkdirSync, watch } from 'node:fs';

/**
 * Resolves once `check` holds, looking first and then again after each change in `dir` (fs.watch,
 * no timer). The directory is watched before each look, so a change between a look that fails
 * and the wait is not missed. `check` may itself change the directory (removing a dead lock):
 * that change wakes the next look.
 */
export async function whenChanged(dir: string, check: () => boolean | Promise<boolean>): Promise<void> {
  mkdirSync(dir, { recursive: true });
  for (;;) {
    let changed = () => {};
    const next = new Promise<void>((resolve) => (changed = resolve));
    const watcher = watch(dir, changed);
    try {
      if (await check()) return;
      await next;
    } finally {
      watcher.close();
    }
  }
}
