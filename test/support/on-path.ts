import { execFileSync } from 'node:child_process';

/**
 * Whether `command` is a program on this machine's PATH, as a shell finds it: what a test that
 * drives it (prlimit, curl) checks before it runs, skipping itself where the machine lacks it
 * (CI installs them: .ci/run).
 */
export function onPath(command: string): boolean {
  try {
    execFileSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
