import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Whether `command` is a program on this machine's PATH (an executable file in one of its
 * directories): what a test that drives it (prlimit, curl) checks before it runs, skipping itself
 * where the machine lacks it (CI installs them: .ci/run).
 */
export function onPath(command: string): boolean {
  return (process.env['PATH'] ?? '').split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, command), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}
