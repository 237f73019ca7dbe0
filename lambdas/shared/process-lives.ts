import { readFileSync } from 'node:fs';

/**
 * Whether a process of this machine has the id `pid`: signal 0 tests it without signalling it, and
 * EPERM says it lives, as another user. (A pid the system gave again to another process answers
 * yes: what holds a lock proves more, cli/owner.ts, or says when its process started, processStartOf.)
 */
export function processLives(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * When process `pid` started, as Linux says it: the boot's id and the start time in clock ticks
 * since that boot (/proc/<pid>/stat's 22nd field), so that a process that took the pid of one gone
 * since (after a restart, in a container started again) is told apart from it. Undefined without
 * /proc (macOS, Windows) or once the process is gone: whoever compares then knows only the pid.
 */
export function processStartOf(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command's closing parenthesis (the command may hold spaces and parentheses): the state is the 3rd field, the start time the 22nd.
    const startTicks = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
    const boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    return startTicks && /^\d+$/.test(startTicks) && boot ? `${boot}:${startTicks}` : undefined;
  } catch {
    return undefined;
  }
}
