import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, afterEach, beforeEach, expect } from 'vitest';

/**
 * With SAVEPOINT_TEST_CPU=<file> (vitest.config.ts setupFiles), each test file's CPU appended to
 * <file> as a JSON line: the worker's user and system time and that of the processes it started
 * and waited for (/proc/self/stat's utime, stime, cutime and cstime, in clock ticks), from
 * before the file is imported to its last hook; `system` is the part of both spent in the kernel
 * (file systems: see test/support/run-dir.ts). Files run one after another in a worker, so the difference is
 * the file's. Linux only; where /proc is missing nothing is written.
 */
const out = process.env.SAVEPOINT_TEST_CPU;

/** [own user+system, children's user+system, own and children's system] in seconds, or undefined without /proc. */
function cpu(): [number, number, number] | undefined {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    // Fields after the command's closing parenthesis: utime is the 14th field, i.e. index 11 here.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ').map(Number);
    const [utime, stime, cutime, cstime] = fields.slice(11, 15) as [number, number, number, number];
    return [(utime + stime) / 100, (cutime + cstime) / 100, (stime + cstime) / 100];
  } catch {
    return undefined;
  }
}

if (out) {
  // Taken as vitest runs this setup file, before it imports the test file: its imports count too.
  const start = cpu();
  const began = Date.now();
  afterAll(() => {
    const end = cpu();
    if (!start || !end) return;
    const file = expect.getState().testPath ?? '';
    appendFileSync(out, `${JSON.stringify({ file: file.slice(process.cwd().length + 1), self: +(end[0] - start[0]).toFixed(2), children: +(end[1] - start[1]).toFixed(2), system: +(end[2] - start[2]).toFixed(2), wallMs: Date.now() - began })}\n`);
  });
}

/**
 * With SAVEPOINT_TEST_TIMEOUTS=<file>, each test's wall time and its timeout appended to <file> as a
 * JSON line (its body with its file's beforeEach and afterEach hooks; beforeAll and afterAll aside): what shows, on an idle machine, that every test is well under
 * its timeout and so passes on a loaded one (`node test/support/timeouts.mjs <file>` sums it up).
 * The line has the test's CPU too (`self`, `children`, seconds, as above): which tests of a costly
 * file cost it. A test's own only when its file runs no tests at once (`.concurrent`): those share
 * the window, and each line holds the others' CPU of that time as well.
 */
const timeouts = process.env.SAVEPOINT_TEST_TIMEOUTS;

if (timeouts) {
  const started = new Map<string, { ms: number; cpu: ReturnType<typeof cpu> }>();
  beforeEach(({ task }) => {
    started.set(task.id, { ms: performance.now(), cpu: cpu() });
  });
  afterEach(({ task }) => {
    const began = started.get(task.id);
    if (began === undefined) return;
    started.delete(task.id);
    const file = (expect.getState().testPath ?? '').slice(process.cwd().length + 1);
    const end = cpu();
    const used = began.cpu && end && { self: +(end[0] - began.cpu[0]).toFixed(2), children: +(end[1] - began.cpu[1]).toFixed(2) };
    appendFileSync(timeouts, `${JSON.stringify({ file, test: task.name, ms: Math.round(performance.now() - began.ms), timeoutMs: task.timeout, ...used })}\n`);
  });
}
