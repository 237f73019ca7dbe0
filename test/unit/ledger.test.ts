import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { LockHeldError } from '../../lambdas/ledger/lock-file.js';
import { processStartOf } from '../../lambdas/shared/process-lives.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { runRecord } from '../support/records.js';

// The embedded ledger's own file on disk: the log, its replay and compaction, the lock. What every
// ledger must do is in test/contract.

const fixture = join(import.meta.dirname, 'fixtures', 'ledger-process.ts');
const at = '2026-11-29T02:00:00.000Z';
const run = (runId: string): RunRecord => runRecord({ runId, agent: 'a', input: { date: '2026-11-28' }, executionArn: 'arn:1', createdAt: at, updatedAt: at });

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
    // A ledger directory as a first open leaves it (its seal key: a log without one is refused naming the key).
    open().close();
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

  it('names the command that holds it, when its lock says (a lock of a pid alone, as older versions write, still holds)', () => {
    const first = open({ command: 'replay' });
    const [pid, named] = readFileSync(join(dir, 'ledger.lock'), 'utf8').split('\n');
    expect(Number(pid)).toBe(process.pid);
    // And when this process started, as Linux says (the machine the tests run on).
    expect(JSON.parse(named!)).toEqual({ command: 'replay', startedAt: expect.any(String), processStart: processStartOf(process.pid) });
    expect(processStartOf(process.pid)).toMatch(/^[0-9a-f-]{36}:\d+$/);
    first.close();
    // Held by another live process (this one's parent), with its command, then without.
    const live = process.ppid;
    writeFileSync(join(dir, 'ledger.lock'), `${live}\n${JSON.stringify({ command: 'run', startedAt: '2026-12-05T00:00:00.000Z' })}\n`);
    const refusal = (() => {
      try {
        open();
      } catch (error) {
        return error;
      }
    })();
    expect(refusal).toBeInstanceOf(LockHeldError);
    expect(refusal).toMatchObject({ holder: { pid: live, command: 'run', startedAt: '2026-12-05T00:00:00.000Z' }, message: expect.stringContaining(`in use by process ${live} (\`savepoint run\`)`) });
    writeFileSync(join(dir, 'ledger.lock'), `${live}\n`);
    expect(() => open()).toThrow(expect.objectContaining({ holder: { pid: live } }));
    rmSync(join(dir, 'ledger.lock'));
  });

  it("takes over a lock whose pid names a process that started after the lock's own (a pid given again: a restart, a container started again), and holds one whose process is still the one that took it", () => {
    // This process's parent lives; the lock says its process started at another time.
    const live = process.ppid;
    writeFileSync(join(dir, 'ledger.lock'), `${live}\n${JSON.stringify({ command: 'run', startedAt: '2026-12-05T00:00:00.000Z', processStart: `${processStartOf(live)}1` })}\n`);
    const reopened = open();
    expect(notes).toEqual([`${join(dir, 'ledger.lock')}: took over a stale lock of process ${live}, which is gone (its pid names a process started since)`]);
    reopened.close();
    // The same pid, started when the lock says: held.
    writeFileSync(join(dir, 'ledger.lock'), `${live}\n${JSON.stringify({ command: 'run', startedAt: '2026-12-05T00:00:00.000Z', processStart: processStartOf(live) })}\n`);
    expect(() => open()).toThrow(expect.objectContaining({ holder: { pid: live, command: 'run', startedAt: '2026-12-05T00:00:00.000Z', processStart: processStartOf(live) } }));
    rmSync(join(dir, 'ledger.lock'));
  });

  it('takes over a lock left by an earlier process with this same pid', () => {
    writeFileSync(join(dir, 'ledger.lock'), `${process.pid}\n`);
    open();
    expect(notes).toEqual([expect.stringMatching(/took over a stale lock/)]);
  });
});

describe('the sealed log (a damaged ledger is refused, naming the file and what is wrong)', () => {
  /** A log of four lines: the run, two counted steps, and a turn-like counter. */
  const written = async () => {
    const ledger = open();
    await ledger.createRun(run('r1'));
    await ledger.countStep('r1', 'turn:1', { steps: 1 });
    await ledger.countStep('r1', 'turn:2', { steps: 1 });
    await ledger.countStep('r1', 'turn:3', { steps: 1 });
    ledger.close();
    return readFileSync(logPath(), 'utf8').split('\n').slice(0, -1);
  };

  it('reopens an undamaged log with everything in it', async () => {
    await written();
    expect(await open().getRun('r1')).toMatchObject({ steps: 3 });
  });

  it.each([
    ['truncated at a line boundary', (lines: string[]) => writeFileSync(logPath(), `${lines.slice(0, 2).join('\n')}\n`), /2 complete lines, but .*ledger\.head records 4: 2 were lost \(truncated\)/],
    ['truncated to half, mid-line', (lines: string[]) => writeFileSync(logPath(), lines.join('\n').slice(0, lines.join('\n').length / 2)), /were lost \(truncated\)/],
    ['a flipped byte in a record', (lines: string[]) => writeFileSync(logPath(), `${[lines[0], lines[1]!.replace('"steps":1', '"steps":7'), ...lines.slice(2)].join('\n')}\n`), /ledger\.jsonl:2 \(RUN#r1\/RUN\) fails verification: the line does not follow/],
    ['two lines swapped', (lines: string[]) => writeFileSync(logPath(), `${[lines[0], lines[2], lines[1], lines[3]].join('\n')}\n`), /ledger\.jsonl:2 .* fails verification: the line does not follow/],
    ['a line forged without the key', (lines: string[]) => writeFileSync(logPath(), `${[...lines, '{"pk":"RUN#r1","sk":"RUN","record":{"kind":"run"}}'].join('\n')}\n`), /ledger\.jsonl:5 RUN#r1\/RUN fails verification: the line carries no seal/],
    ['the log deleted', () => rmSync(logPath()), /ledger\.jsonl fails verification: the file is missing, but .*ledger\.head records 4 lines/],
    ['the log and its head deleted', () => (rmSync(logPath()), rmSync(join(dir, 'ledger.head'))), /the file is missing, but the seal key .*ledger-seal\.key shows that a ledger was kept/],
    ['the head altered', () => writeFileSync(join(dir, 'ledger.head'), readFileSync(join(dir, 'ledger.head'), 'utf8').replace('"lines":4', '"lines":3')), /do not match .*ledger\.head/],
  ])('refuses a log %s', async (_name, damage, message) => {
    const lines = await written();
    damage(lines);
    const files = () => ['ledger.jsonl', 'ledger.head'].map((name) => (existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : 'absent'));
    const found = files();
    expect(() => open()).toThrow(message);
    expect(() => open()).toThrow(/^ledger integrity: /);
    // Refused, and left exactly as found (no torn tail cut, no new file), for whoever looks next.
    expect(files()).toEqual(found);
  });

  it('accepts a log one line longer than its head (the process died between the two writes)', async () => {
    const lines = await written();
    const head = readFileSync(join(dir, 'ledger.head'));
    const ledger = open();
    await ledger.countStep('r1', 'turn:4', { steps: 1 });
    ledger.close();
    writeFileSync(join(dir, 'ledger.head'), head);
    expect(lines).toHaveLength(4);
    expect(await open().getRun('r1')).toMatchObject({ steps: 4 });
  });

  it('keeps the key file readable by its owner only', async () => {
    await written();
    expect(statSync(join(dir, 'keys', 'ledger-seal.key')).mode & 0o777).toBe(0o600);
  });
});
