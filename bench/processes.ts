import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';

export interface ProcessEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface ProcessHandlers {
  /** Each line it prints on stdout, as it comes. */
  onLine?: (line: string) => void;
  /** Everything it printed on stderr so far, with the process, to kill it. */
  onStderr?: (text: string, kill: () => void) => void;
}

/**
 * Runs a benchmark script (`bench/<file>.ts`) as its own process with a JSON job. Resolves with
 * how it ended.
 */
export function benchProcess(file: string, job: object, handlers: ProcessHandlers = {}): Promise<ProcessEnd> {
  return nodeProcess(['--import', 'tsx', new URL(file, import.meta.url).pathname, JSON.stringify(job)], handlers);
}

/** Runs `node <args>` with what it prints collected (stdin closed). Resolves with how it ended. */
export function nodeProcess(args: string[], handlers: ProcessHandlers = {}): Promise<ProcessEnd> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    });
    let stdout = '';
    let stderr = '';
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) if (line) handlers.onLine?.(line);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
      handlers.onStderr?.(stderr, () => child.kill('SIGKILL'));
    });
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}

/** The CLI as a user's npx runs it. */
export const BIN = new URL('../bin/savepoint.js', import.meta.url).pathname;
const PEAK_RSS = new URL('./peak-rss.mjs', import.meta.url).pathname;

/** A command's figures: wall ms, CPU ms, the CPU ms Node's own start took in the same process (bench/peak-rss.mjs), and peak RSS (MB). */
export type CommandFigures = { wallMs: number; cpuMs: number; startCpuMs: number; peakRssMb: number };

/** One run of `savepoint <args> --json` against `stateDir`, as a user runs it (its own process), its output checked by `check`: its figures. */
export async function savepointCommand(stateDir: string, args: string[], check: (output: any) => boolean): Promise<CommandFigures> {
  const started = performance.now();
  const end = await nodeProcess(['--import', PEAK_RSS, BIN, '--state-dir', stateDir, ...args, '--json']);
  const wallMs = Math.round(performance.now() - started);
  const rss = /^savepoint-bench-peak-rss-kb (\d+)$/m.exec(end.stderr);
  const cpu = /^savepoint-bench-cpu-ms (\d+)$/m.exec(end.stderr);
  const start = /^savepoint-bench-start-cpu-ms ([\d.]+)$/m.exec(end.stderr);
  if (end.code !== 0 || !rss || !cpu || !start) throw new Error(`savepoint ${args.join(' ')} ended with code ${end.code}: ${end.stderr.slice(-2000)}`);
  if (!check(JSON.parse(end.stdout))) throw new Error(`savepoint ${args.join(' ')}: unexpected output ${end.stdout.slice(0, 500)}`);
  return { wallMs, cpuMs: Number(cpu[1]), startCpuMs: Number(start[1]), peakRssMb: Math.round(Number(rss[1]) / 1024) };
}
