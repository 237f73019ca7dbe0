import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { RunConfig, ZERO_COUNTERS, type RunRecord } from '../../lambdas/ledger/records.js';

// The embedded ledger's own file on disk: the log, its replay and compaction, the lock. What every
// ledger must do is in test/contract.

const fixture = join(import.meta.dirname, 'fixtures', 'ledger-process.ts');
const at = '2026-11-29T02:00:00.000Z';
const run = (runId: string): RunRecord => ({
  kind: 'run', runId, agent: 'a', input: { date: '2026-11-28' }, prompt: 'p', model: 'm', config: RunConfig.parse({}),
  fingerprint: 'f', priceTableVersion: 'v', status: 'running', executionArn: 'arn:1', executions: ['arn:1'],
  createdAt: at, updatedAt: at, ...ZERO_COUNTERS,
});

let dir: string;
let notes: string[];
const opened: EmbeddedLedger[] = [];
const open = (options: Parameters<typeof EmbeddedLedger.open>[0] = {}) => {
  const ledger = EmbeddedLedger.open({ dir, onNote: (note) => notes.push(note), ...options });
  opened.push(ledger);
  return ledger;
};
const logPath = () => join(dir, 'ledger.jsonl');

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'savepoint-ledger-'));
  notes = [];
});
afterEach(() => {
  for (const ledger of opened.splice(0)) ledger.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('the log', () => {
  it('drops a line torn by a crash mid-append, with a note, and appends after it cleanly', async () => {
    const first = open();
    await first.createRun(run('r1'));
    await first.countStep('r1', 'turn:1', { steps: 1 });
    first.close();
    appendFileSync(logPath(), '{"pk":"RUN#r1","sk":"RUN","record":{"kind":"ru');

    const second = open();
    expect(notes).toEqual([expect.stringMatching(/ledger\.jsonl:3: dropped a torn last line/)]);
    expect(await second.getRun('r1')).toMatchObject({ steps: 1 });
    await second.countStep('r1', 'turn:2', { steps: 1 });
    second.close();

    expect(await open().getRun('r1')).toMatchObject({ steps: 2 });
    expect(notes).toHaveLength(1);
  });

  it('refuses to open a log with a corrupt line in the middle, naming the file and line', async () => {
    const first = open();
    await first.createRun(run('r1'));
    await first.createRun(run('r2'));
    await first.createRun(run('r3'));
    first.close();
    const lines = readFileSync(logPath(), 'utf8').split('\n');
    lines[1] = lines[1]!.slice(0, 20) + 'garbage';
    writeFileSync(logPath(), lines.join('\n'));

    expect(() => open()).toThrow(`${logPath()}:2: corrupt ledger log line`);
    // Nothing was skipped or truncated, and the failed open left no lock behind.
    expect(readFileSync(logPath(), 'utf8')).toBe(lines.join('\n'));
    expect(() => open()).toThrow(/:2: corrupt/);
  });

  it('refuses a line that is JSON but not a ledger entry', async () => {
    writeFileSync(logPath(), '{"pk":"RUN#r1","record":{}}\n');
    expect(() => open()).toThrow(`${logPath()}:1: corrupt ledger log line (expected {"pk": string, "sk": string, "record": object})`);
  });

  it('compacts on open when the log is much bigger than the live state, keeping every record', async () => {
    const first = open();
    await first.createRun(run('r1'));
    for (let step = 1; step <= 50; step++) await first.countStep('r1', `turn:${step}`, { steps: 1, inputTokens: 10 });
    await first.recordGuardEvent('r1', { guard: 'steps', action: 'warned', reason: 'steps at 80%', at });
    const before = await first.getRun('r1');
    first.close();
    const bytes = statSync(logPath()).size;

    const second = open({ compaction: { ratio: 4, minBytes: 1024 } });
    expect(notes).toEqual([expect.stringMatching(/compacted \d+ bytes of log to \d+ bytes of live state/)]);
    expect(statSync(logPath()).size).toBeLessThan(bytes / 4);
    expect(await second.getRun('r1')).toEqual(before);
    // What compaction kept includes what the conditions need: the counted steps, the reasons.
    expect(await second.countStep('r1', 'turn:50', { steps: 1 })).toBe(false);
    await second.recordGuardEvent('r1', { guard: 'steps', action: 'warned', reason: 'steps at 80%', at });
    await second.countStep('r1', 'turn:51', { steps: 1 });
    second.close();

    expect(await open().getRun('r1')).toMatchObject({ steps: 51, guardEvents: [expect.anything()] });
  });

  it('does not compact a log that is mostly live state', async () => {
    const first = open();
    for (let index = 0; index < 20; index++) await first.createRun(run(`r${index}`));
    first.close();
    open({ compaction: { ratio: 4, minBytes: 0 } });
    expect(notes).toEqual([]);
  });

  it('removes the temp file of a compaction that died before its rename', async () => {
    const first = open();
    await first.createRun(run('r1'));
    first.close();
    writeFileSync(`${logPath()}.compacting`, '{"half');
    expect(await open().getRun('r1')).toEqual(run('r1'));
    expect(existsSync(`${logPath()}.compacting`)).toBe(false);
  });

  it('keeps every acknowledged write when the process is killed', async () => {
    const killed = spawnSync(process.execPath, ['--import', 'tsx', fixture, 'crash', dir, '40'], { encoding: 'utf8' });
    expect(killed.signal).toBe('SIGKILL');
    expect(await open().getRun('r1')).toMatchObject({ steps: 40 });
    expect(notes).toEqual([expect.stringMatching(/took over a stale lock of process \d+, which is gone/)]);
  });
});

describe('the lock on the directory', () => {
  it('refuses a second open in the same process', () => {
    open();
    expect(() => open()).toThrow(/already open in this process/);
  });

  it('is released on close', async () => {
    const first = open();
    await first.createRun(run('r1'));
    first.close();
    expect(await open().getRun('r1')).toEqual(run('r1'));
    expect(notes).toEqual([]);
  });

  it('refuses an open while another live process holds the directory, naming it', async () => {
    const holder = spawn(process.execPath, ['--import', 'tsx', fixture, 'hold', dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      await new Promise<void>((resolve, reject) => {
        holder.stdout.once('data', () => resolve());
        holder.once('exit', (code) => reject(new Error(`holder exited with ${code}`)));
      });
      expect(() => open()).toThrow(`${join(dir, 'ledger.lock')}: the ledger is in use by process ${holder.pid}`);
    } finally {
      holder.kill('SIGKILL');
      await new Promise((resolve) => holder.once('exit', resolve));
    }
    // Its process is gone: the lock is stale and taken over.
    open();
    expect(notes).toEqual([`${join(dir, 'ledger.lock')}: took over a stale lock of process ${holder.pid}, which is gone`]);
  });

  it('takes over a lock left by an earlier process with this same pid', () => {
    writeFileSync(join(dir, 'ledger.lock'), `${process.pid}\n`);
    open();
    expect(notes).toEqual([expect.stringMatching(/took over a stale lock/)]);
  });
});
