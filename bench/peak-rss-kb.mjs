import { readFileSync } from 'node:fs';

/**
 * This process's peak RSS in KB: the kernel's high-water mark of its own memory (`VmHWM` in
 * /proc/self/status on Linux). Not `process.resourceUsage().maxRSS`: Linux carries a process's
 * maxrss over from its parent through fork and exec, so a child of a large process (the growth
 * benchmark's engine, with 150 runs in it) reports the parent's peak when its own is lower
 * (measured: a `node -e` child of a 400 MB process reported 404 MB, its VmHWM 39 MB).
 * Elsewhere, maxRSS is what there is.
 */
export function peakRssKb() {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync('/proc/self/status', 'utf8'));
    if (hwm) return Number(hwm[1]);
  } catch {
    // not Linux: no /proc
  }
  return process.resourceUsage().maxRSS;
}
