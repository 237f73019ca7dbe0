import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeProcess } from './processes.js';
import { dayWithSteps } from './workload.js';

const BIN = new URL('../bin/savepoint.js', import.meta.url).pathname;
const PEAK_RSS = new URL('./peak-rss.mjs', import.meta.url).pathname;

/** The `savepoint run` flags of each ledger: in memory (`--memory`), on disk (the default), on disk synced (`--durability sync`), DynamoDB on dynalite. */
export const CLI_LEDGERS = { memory: ['--memory'], disk: [], 'disk-sync': ['--durability', 'sync'], dynalite: ['--ledger', 'dynalite'] } as const;

export interface CliRun {
  ledger: keyof typeof CLI_LEDGERS;
  steps: number;
  wallMs: number;
  peakRssMb: number;
}

/**
 * What a user's process costs: `savepoint run` (bin/savepoint.js, as `npm start` runs it) on a day
 * of `steps` agent steps, a fresh process and state directory, p = 0. Its peak RSS is the process's
 * own, reported by the process itself as it ends (bench/peak-rss.mjs); the run must succeed with
 * exactly `steps` agent steps, or this throws.
 */
export async function cliRun(ledger: keyof typeof CLI_LEDGERS, steps: number): Promise<CliRun> {
  const root = mkdtempSync(join(tmpdir(), `savepoint-cli-rss-${ledger}-`));
  try {
    const dayFile = join(root, 'day.json');
    writeFileSync(dayFile, JSON.stringify(dayWithSteps(steps).day));
    const args = ['--import', PEAK_RSS, BIN, '--state-dir', join(root, 'state'), 'run', '--agent', 'refund-reconciler', '--world-data', dayFile, '--json', ...CLI_LEDGERS[ledger]];
    const started = performance.now();
    const { code, stdout, stderr } = await nodeProcess(args);
    const wallMs = performance.now() - started;
    const rss = /^savepoint-bench-peak-rss-kb (\d+)$/m.exec(stderr);
    if (code !== 0 || !rss) throw new Error(`savepoint run (${ledger}) ended with code ${code}: ${stderr.slice(-2000)}`);
    const report = JSON.parse(stdout) as { status?: string; steps?: number };
    if (report.status !== 'succeeded' || report.steps !== steps) throw new Error(`savepoint run (${ledger}): ${report.status} after ${report.steps} of ${steps} steps`);
    return { ledger, steps, wallMs, peakRssMb: Math.round(Number(rss[1]) / 1024) };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}
