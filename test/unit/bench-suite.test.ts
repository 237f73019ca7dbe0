import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkReport, heldLine, SPEED_LIMITS, TEST_SUITE_TARGET } from '../../bench/check.js';
import { childrenTimes, cpuOfScript, suiteBenchmark, type SuiteReport } from '../../bench/suite.js';

/** A suite report at `ratio` × the floor, in the shape bench/suite.ts prints. */
function report(ratio: number, command = 'npm test'): SuiteReport {
  const floorMs = 560;
  const total = (ratio * floorMs) / 1000;
  return { command, cpuSeconds: { user: total * 0.9, system: total * 0.1, total }, wallSeconds: 210, floor: { cpuMs: floorMs, beforeMs: [550, 560, 570], afterMs: [555, 560, 580] }, ratioToFloor: ratio, load: [0.2, 2.1] };
}
const text = (value: unknown) => JSON.stringify(value);

describe('bench/suite.ts: the CPU of a command and its processes', () => {
  it("reads the children's line of bash's times, and nothing else", () => {
    expect(childrenTimes('0m0.001s 0m0.000s\n5m3.250s 0m31.500s\n')).toEqual({ userMs: 303_250, systemMs: 31_500 });
    // A locale whose decimal point is a comma (bash's times follows LC_NUMERIC).
    expect(childrenTimes('0m0,001s 0m0,000s\n5m3,250s 0m31,500s\n')).toEqual({ userMs: 303_250, systemMs: 31_500 });
    expect(childrenTimes('0m0.001s 0m0.000s\n')).toBeUndefined();
    expect(childrenTimes('')).toBeUndefined();
  });

  it("counts a child's child (the processes npm starts) once waited for, and fails with the script's exit code", async () => {
    // A Node process that busies itself for 150 ms of CPU, started by a shell started by bash.
    const busy = `"${process.execPath}" -e "const end = process.cpuUsage().user + 150000; while (process.cpuUsage().user < end) {}"`;
    const { userMs, systemMs, wallMs } = await cpuOfScript(`bash -c '${busy.replaceAll("'", "'\\''")}'`);
    expect(userMs + systemMs).toBeGreaterThanOrEqual(150);
    expect(wallMs).toBeGreaterThan(0);
    await expect(cpuOfScript('exit 3')).rejects.toThrow('"exit 3" ended with code 3');
  });

  it('gives the script and its processes no descriptor 3, so that one it leaves running cannot hold the benchmark open', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-bench-suite-'));
    try {
      // What the script's shell, and every process it starts, would inherit: a pipe it could write to.
      await cpuOfScript(`if { true >&3; } 2>/dev/null; then echo open; else echo closed; fi > "${join(dir, 'fd3')}"`);
      expect(readFileSync(join(dir, 'fd3'), 'utf8').trim()).toBe('closed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('measures the floor before and after the command, and holds the ratio of their median', async () => {
    const command = `"${process.execPath}" -e 0`;
    const measured = await suiteBenchmark({ batches: 1, command });
    expect(measured.floor.beforeMs).toHaveLength(1);
    expect(measured.floor.afterMs).toHaveLength(1);
    expect(measured.floor.cpuMs).toBe((measured.floor.beforeMs[0]! + measured.floor.afterMs[0]!) / 2);
    expect(measured.ratioToFloor).toBe((measured.cpuSeconds.total * 1000) / measured.floor.cpuMs);
    // Not the README's command: the check refuses it, whatever its figures.
    expect(checkReport('suite', text(measured))).toEqual([`command: the suite benchmark ran ${JSON.stringify(command)}, not the README's test command`]);
  });
});

describe('bench/check.ts suite (issue 38: npm test in 300 s of CPU)', () => {
  it('states its target as 300 s over the floor measured at rest', () => {
    expect(SPEED_LIMITS.suite.target).toBe(Math.round((TEST_SUITE_TARGET.cpuSeconds * 1000) / TEST_SUITE_TARGET.floorCpuMs));
  });

  it('passes the figure measured, and fails the suite at twice its bound (a 2× regression of the measured fails too)', () => {
    const measured = 825; // the highest of the CIs in SPEED_LIMITS.suite.measured
    expect(checkReport('suite', text(report(measured)))).toEqual([]);
    const problems = checkReport('suite', text(report(2 * SPEED_LIMITS.suite.bound)));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^ratioToFloor: slower than CI's bound: npm test's CPU: \d+× the floor's batch \(CI bound \d+; target \d+: [\d.]+× over it\)$/);
    expect(checkReport('suite', text(report(2 * measured)))).toHaveLength(1);
  });

  it('says the gap to the target, and met when under it', () => {
    const figure = (value: number) => ({ path: 'ratioToFloor', name: "npm test's CPU", value, unit: "× the floor's batch", limit: SPEED_LIMITS.suite });
    expect(heldLine(figure(SPEED_LIMITS.suite.target! * 1.1))).toMatch(/target \d+: 1\.10× over it\)$/);
    expect(heldLine(figure(SPEED_LIMITS.suite.target! * 0.9))).toMatch(/target \d+: met\)$/);
  });

  it('fails a report without its floor or with a NaN figure', () => {
    const { floor: _, ...noFloor } = report(600);
    expect(checkReport('suite', text(noFloor))[0]).toMatch(/^floor: /);
    expect(checkReport('suite', text({ ...report(600), ratioToFloor: Number.NaN }))[0]).toMatch(/^ratioToFloor: /);
  });
});
