import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { afterAll } from 'vitest';
import { join } from 'node:path';
import { openLedger } from '../../cli/state.js';
import type { Day } from '../../agents/refund-reconciler/domain.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import type { ToolCallRecord } from '../../lambdas/records/ledger-records.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { scratchDir } from './scratch.js';

const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;

/**
 * A day of the sample day's date with six refund requests, two of them large (two approvals), the
 * first request one of them: for a CLI test whose run's figures are not the point (a fork's links,
 * a kill or an interrupt at the first approval, a run decided to its end, a run priced twice): the
 * kinds of turns and tool calls the sample day's 25 requests make, for less CPU (a `savepoint run`
 * of it to its end about two thirds of the sample day's).
 */
export const smallDay = makeSampleDay(7, { plain: 2, already_refunded: 1, mismatch: 1, large: 2 });

export interface Exit {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the CLI as its own process, which a crash really ends. `killAtStep` ends it from outside
 * with SIGKILL once its progress shows that agent step: a moment of the run, not of the clock
 * (a delay after start would miss a run that finishes sooner on a fast machine).
 */
export function savepoint(args: string[], options: { killAtStep?: number; /** Over this process's; a variable set to undefined is left out. */ env?: Record<string, string | undefined> } = {}): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...(options.env && { env: { ...process.env, ...options.env } }) });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    let killed = false;
    const watch = () => {
      if (options.killAtStep === undefined || killed) return;
      // Progress lines: `   0.2s     9  turn   4  tool:  get_order → ok` (elapsed, agent step, turn).
      const steps = [...stdout.matchAll(/^\s+[\d.]+s\s+(\d+)\s+turn\s/gm)].map((match) => Number(match[1]));
      if (steps.some((step) => step >= options.killAtStep!)) {
        killed = true;
        child.kill('SIGKILL');
      }
    };
    child.stdout.on('data', watch);
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      watch();
    });
    const watchdog = setTimeout(() => child.kill('SIGKILL'), 120_000);
    // 'close', not 'exit': at 'exit' the child's stdout may still hold output not yet read (an
    // --json report cut to nothing, seen once in CI).
    child.on('close', (code, signal) => {
      clearTimeout(watchdog);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/**
 * A state directory with the day and the synthesized template the engine processes share, in the
 * test run's directory (test/support/run-dir.ts): removed when the run ends, not left in the OS's temp.
 */
export async function workspace(name: string, day: Day, options: { traced?: boolean } = {}): Promise<{ stateDir: string; args: (...more: string[]) => string[] }> {
  const root = scratchDir(`savepoint-${name}-`);
  const dayFile = join(root, 'day.json');
  const templateFile = join(root, 'template.json');
  writeFileSync(dayFile, JSON.stringify(day));
  // `traced`: the template of a deployment with the `tracing` prop, for runs with OTEL_* variables (its traceRunEnd grant).
  writeFileSync(templateFile, JSON.stringify(await cachedTemplate('refund-reconciler', { traced: options.traced === true })));
  const stateDir = join(root, 'state');
  return { stateDir, args: (...more) => ['--state-dir', stateDir, ...more, '--agent', 'refund-reconciler', '--world-data', dayFile, '--template', templateFile] };
}

/**
 * A workspace (above) whose state directory holds one finished run of the refund reconciler on
 * `day`, made in this process by the CLI's own `run` command (quietly): for the tests of the
 * commands that read a state directory.
 */
export async function workspaceWithRun(name: string, day: Day): Promise<{ stateDir: string }> {
  const made = await workspace(name, day);
  const value = (option: string) => made.args()[made.args().indexOf(option) + 1];
  const { runCommand } = await import('../../cli/run.js');
  const quiet = { out: () => {}, err: () => {}, interactive: false };
  await runCommand({ agent: 'refund-reconciler', stateDir: made.stateDir, worldData: value('--world-data'), template: value('--template'), failRate: '0', seed: '1', crashRate: '0', json: false, memory: false, resume: false }, quiet);
  return { stateDir: made.stateDir };
}

interface JournalEntry {
  kind: 'refund' | 'review' | 'report';
  key: string;
  record: { refundRequestId?: string };
}

/** What the payments provider committed, from its journal on disk. */
export function providerJournal(stateDir: string): JournalEntry[] {
  const file = join(stateDir, 'payments.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as JournalEntry);
}

/** Refund request ids the provider paid, or put in review, more than once (must always be empty). */
export function duplicates(stateDir: string): string[] {
  const counts = new Map<string, number>();
  for (const entry of providerJournal(stateDir)) {
    if (entry.kind === 'report') continue;
    const key = `${entry.kind}:${entry.record.refundRequestId}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].filter(([, count]) => count > 1).map(([key]) => key);
}

/** The run record and its tool calls, read from the state directory while no engine runs. */
export async function ledgerOf(stateDir: string, runId: string) {
  const { ledger, close } = await openLedger(stateDir);
  try {
    const run = await ledger.getRun(runId);
    const { turns, calls, approvals } = await ledger.listConversation(runId);
    return { run, turns, calls, approvals, call: (name: string) => calls.find((call: ToolCallRecord) => call.name === name) };
  } finally {
    await close();
  }
}

/** The CLI's entry point, as `npx savepoint` runs it. */
export const SAVEPOINT_BIN = new URL('../../bin/savepoint.js', import.meta.url).pathname;

/**
 * The processes a test file starts and the directories it makes, killed and removed after its
 * tests (call it at the file's top level: it registers the file's afterAll).
 */
export function leftBehind(): { children: Set<ChildProcess>; dirs: string[] } {
  const children = new Set<ChildProcess>();
  const dirs: string[] = [];
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });
  return { children, dirs };
}

/**
 * `savepoint <args>` started in the background (killed after the file's tests, with `children`):
 * `reached` settles once its stdout shows `pattern` (by default its run asking a person: its
 * `⏸ approval` line) — a moment of the run, not of the clock; `output` is what it printed so far
 * (stdout and stderr), `exited` its exit code.
 */
export function startUntil(
  args: string[],
  children: Set<ChildProcess>,
  pattern = /⏸ {2}approval \S+:/,
): { child: ChildProcess; reached: Promise<void>; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [SAVEPOINT_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  const reached = new Promise<void>((resolve) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (pattern.test(output)) resolve();
    });
  });
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  return { child, reached, output: () => output, exited };
}
