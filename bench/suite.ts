/**
 * `node --import tsx bench/main.ts --suite [--batches <n>] [--json]`: issue 38's test-suite figure.
 * Runs the README's test command (`npm test`: the type check and the whole suite) and measures its
 * CPU, its processes' and theirs, as /usr/bin/time counts it (the rusage of the processes waited
 * for: bash's `times` after the command). Its output goes to stderr, so that stdout keeps the
 * report; a failing command fails the benchmark, naming how it ended.
 *
 * The figure held is that CPU over a floor measured in the same minutes: batches of 5 processes of
 * bench/suite-floor.mjs (a fixed amount of plain JavaScript work, each with Node's start) before the
 * suite and after it, their median. The same suite took 304–354 s of CPU in six fresh-clone CIs
 * within an hour, the machine's own speed moving it: the floor measured 530–618 ms beside it, and
 * the ratio moved 11% (bench/check.ts SPEED_LIMITS.suite).
 */
import { spawn } from 'node:child_process';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { median } from './stats.js';

/** The README's test command. */
export const SUITE_COMMAND = 'npm test';
const FLOOR = fileURLToPath(new URL('./suite-floor.mjs', import.meta.url));
const FLOOR_PROCESSES_PER_BATCH = 5;

export interface SuiteReport {
  command: string;
  /** The command's CPU, its processes' included (those waited for), in seconds. */
  cpuSeconds: { user: number; system: number; total: number };
  wallSeconds: number;
  /** The floor's CPU per batch (ms), each batch before the suite and after it; `cpuMs` their median. */
  floor: { cpuMs: number; beforeMs: number[]; afterMs: number[] };
  /** The suite's CPU over the floor's batch: what bench/check.ts holds. */
  ratioToFloor: number;
  /** The 1-minute load average before and after the suite. */
  load: [number, number];
}

/** The CPU (ms) and wall time of `script` run by bash, its processes' CPU included: bash's `times` after it, on descriptor 3. */
export function cpuOfScript(script: string): Promise<{ userMs: number; systemMs: number; wallMs: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    // The script's output to this process's stderr: stdout is the report's. Descriptor 3 closed for
    // the script: a process it leaves behind would otherwise hold the pipe open, and 'close' with it.
    const child = spawn('bash', ['-c', `{\n${script}\n} 3>&-\nstatus=$?\ntimes >&3\nexit $status`], { stdio: ['inherit', 2, 2, 'pipe'] });
    let times = '';
    child.stdio[3]!.on('data', (chunk: Buffer) => (times += chunk));
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code !== 0) return reject(new Error(`${JSON.stringify(script)} ended with ${signal ?? `code ${code}`}`));
      const children = childrenTimes(times);
      if (!children) return reject(new Error(`bash's times printed ${JSON.stringify(times)}: no children's times`));
      resolve({ ...children, wallMs: performance.now() - started });
    });
  });
}

/**
 * The children's user and system time (ms) from bash's `times` output: its second line,
 * `0m1.234s 0m0.056s`, with the locale's decimal point (`0m1,234s` in some).
 */
export function childrenTimes(output: string): { userMs: number; systemMs: number } | undefined {
  const line = output.trim().split('\n')[1];
  const parts = line && /^(\d+)m(\d+[.,]\d+)s (\d+)m(\d+[.,]\d+)s$/.exec(line.trim());
  if (!parts) return undefined;
  const ms = (minutes: string, seconds: string) => (Number(minutes) * 60 + Number(seconds.replace(',', '.'))) * 1000;
  return { userMs: ms(parts[1]!, parts[2]!), systemMs: ms(parts[3]!, parts[4]!) };
}

async function floorBatch(): Promise<number> {
  const { userMs, systemMs } = await cpuOfScript(`for n in $(seq ${FLOOR_PROCESSES_PER_BATCH}); do "${process.execPath}" "${FLOOR}" > /dev/null || exit 1; done`);
  return Math.round(userMs + systemMs);
}

/** `count` floor batches, one after another: each one's CPU (ms). */
async function floorBatches(count: number): Promise<number[]> {
  const cpuMs: number[] = [];
  for (let batch = 0; batch < count; batch += 1) cpuMs.push(await floorBatch());
  return cpuMs;
}

export async function suiteBenchmark({ batches = 3, command = SUITE_COMMAND } = {}): Promise<SuiteReport> {
  const beforeMs = await floorBatches(batches);
  const loadBefore = loadavg()[0]!;
  const suite = await cpuOfScript(command);
  const loadAfter = loadavg()[0]!;
  const afterMs = await floorBatches(batches);
  const floorMs = median([...beforeMs, ...afterMs]);
  const total = (suite.userMs + suite.systemMs) / 1000;
  return {
    command,
    cpuSeconds: { user: suite.userMs / 1000, system: suite.systemMs / 1000, total },
    wallSeconds: Math.round(suite.wallMs) / 1000,
    floor: { cpuMs: floorMs, beforeMs, afterMs },
    ratioToFloor: (total * 1000) / floorMs,
    load: [loadBefore, loadAfter],
  };
}

if (process.argv.includes('--suite') || import.meta.filename === process.argv[1]) {
  const { values } = parseArgs({ options: { suite: { type: 'boolean' }, batches: { type: 'string', default: '3' }, json: { type: 'boolean', default: false } }, strict: true });
  const batches = Number(values.batches);
  if (!Number.isInteger(batches) || batches < 1) {
    process.stderr.write(`--batches: a whole number ≥ 1, not ${values.batches}\n`);
    process.exit(2);
  }
  const report = await suiteBenchmark({ batches });
  if (values.json) console.log(JSON.stringify(report, null, 2));
  else {
    console.log(`${report.command}: ${report.cpuSeconds.total.toFixed(1)} s of CPU (${report.cpuSeconds.user.toFixed(1)} user + ${report.cpuSeconds.system.toFixed(1)} system), ${report.wallSeconds.toFixed(0)} s of wall time, at load ${report.load.map((load) => load.toFixed(1)).join('–')}`);
    console.log(`the floor (${FLOOR_PROCESSES_PER_BATCH} processes of bench/suite-floor.mjs): ${report.floor.cpuMs} ms of CPU (before ${report.floor.beforeMs.join(', ')}; after ${report.floor.afterMs.join(', ')}); the suite ${report.ratioToFloor.toFixed(0)}× it`);
  }
}
