/**
 * Whether a process of this machine has the id `pid`: signal 0 tests it without signalling it, and
 * EPERM says it lives, as another user. (A pid the system gave again to another process answers
 * yes: what holds a lock proves more, cli/owner.ts.)
 */
export function processLives(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
