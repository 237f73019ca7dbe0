import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { CrashPoint } from '../../local/runtime/crash.js';
import { providerJournal, savepoint, workspace } from '../support/cli-process.js';

/**
 * A damaged ledger is refused, never trusted: each corruption applied to a real state directory
 * after a real kill (the engine process ends with SIGKILL right after recording a refund), then
 * the real CLI. The resume exits non-zero naming the file and what is wrong, and pays nothing
 * more (the provider's journal is unchanged); `savepoint verify` says which run fails.
 */

const runId = 'refunds-2026-11-28';
/** Three plain refunds: the kill comes after the first is paid and recorded. */
const day = makeSampleDay(7, { plain: 3, already_refunded: 0, mismatch: 0, large: 0 });

let crashed: { stateDir: string; args: (...more: string[]) => string[] };
let paidBeforeDamage: number;
const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

beforeAll(async () => {
  crashed = await workspace('integrity', day);
  roots.push(dirname(crashed.stateDir));
  const killed = await savepoint(crashed.args('run', '--json', '--crash-at', `${CrashPoint.AfterRecord}:issue_refund`));
  expect(killed.signal, killed.stderr).toBe('SIGKILL');
  paidBeforeDamage = providerJournal(crashed.stateDir).length;
  expect(paidBeforeDamage).toBeGreaterThan(0);
}, 180_000);

/** A copy of the killed run's state directory (each case damages its own). */
function copy(name: string): { stateDir: string; args: (...more: string[]) => string[] } {
  const stateDir = `${crashed.stateDir}-${name}`;
  cpSync(crashed.stateDir, stateDir, { recursive: true });
  return { stateDir, args: (...more) => crashed.args(...more).map((arg) => (arg === crashed.stateDir ? stateDir : arg)) };
}

const ledgerFile = (stateDir: string) => join(stateDir, 'ledger.jsonl');

/** Flips the case of one letter inside a turn's text: still valid JSON, no longer what was sealed. */
function flipByte(stateDir: string): void {
  const text = readFileSync(ledgerFile(stateDir), 'utf8');
  const at = text.indexOf('"text":"', text.indexOf('"kind":"turn"')) + '"text":"'.length + 1;
  const char = text[at]!;
  writeFileSync(ledgerFile(stateDir), text.slice(0, at) + (char === char.toUpperCase() ? char.toLowerCase() : char.toUpperCase()) + text.slice(at + 1));
}

describe('a damaged state directory after a kill', { timeout: 180_000 }, () => {
  it.each([
    ['the ledger truncated to half', (stateDir: string) => writeFileSync(ledgerFile(stateDir), readFileSync(ledgerFile(stateDir)).subarray(0, readFileSync(ledgerFile(stateDir)).length / 2)), /ledger integrity: record .*ledger\.jsonl fails verification: .*were lost \(truncated\)/],
    ['a flipped byte in the ledger', flipByte, /ledger integrity: record .*ledger\.jsonl:\d+ \(RUN#refunds-2026-11-28\/TURN#\d+\) fails verification/],
    ['the ledger deleted', (stateDir: string) => (rmSync(ledgerFile(stateDir)), rmSync(join(stateDir, 'ledger.head'))), /ledger integrity: record .*ledger\.jsonl fails verification: the file is missing, but the seal key .* shows that a ledger was kept/],
  ])('%s: the resume is refused, naming it, and pays nothing more', async (name, damage, message) => {
    const { stateDir, args } = copy(name.replace(/\W+/g, '-'));
    damage(stateDir);
    const resumed = await savepoint(args('resume', runId, '--json'));
    expect(resumed.code, resumed.stderr).toBe(1);
    expect(resumed.stderr).toMatch(message);
    expect(providerJournal(stateDir)).toHaveLength(paidBeforeDamage);

    const verified = await savepoint(['--state-dir', stateDir, 'verify', runId]);
    expect(verified.code).toBe(1);
    expect(verified.stderr).toMatch(message);
  });

  it.each([
    ['deleted', (key: string) => rmSync(key), /the file is missing, but \S+ledger\.head records \d+ lines sealed with it, which a new key would not verify: restore it from a backup/],
    ['emptied', (key: string) => writeFileSync(key, ''), /the file holds 0 bytes, not a 32-byte seal key \(cut short\): restore it from a backup/],
  ])('the seal key %s: every command names it, none makes a new one, and the resume pays nothing more', async (name, damage, why) => {
    const { stateDir, args } = copy(`seal-key-${name}`);
    const key = join(stateDir, 'keys', 'ledger-seal.key');
    damage(key);
    const left = existsSync(key) ? readFileSync(key) : undefined;
    for (const command of [['status', runId], ['runs'], ['verify', '--all'], ['prune', '--finished-before', '2100-01-01']]) {
      const refused = await savepoint(['--state-dir', stateDir, ...command]);
      expect(refused.code, `${command.join(' ')}: ${refused.stderr}`).toBe(1);
      expect(refused.stderr).toMatch(new RegExp(`ledger integrity: record \\S+keys/ledger-seal\\.key fails verification: ${why.source}`));
    }
    const resumed = await savepoint(args('resume', runId, '--json'));
    expect(resumed.code, resumed.stderr).toBe(1);
    expect(resumed.stderr).toMatch(why);
    // Not a new key in its place (which verifies none of the lines, and stands where the backup goes).
    expect(existsSync(key) ? readFileSync(key) : undefined).toEqual(left);
    expect(providerJournal(stateDir)).toHaveLength(paidBeforeDamage);
  });

  it.each(['ledger.head', 'ledger.jsonl', 'ledger.index', 'keys/iam-credentials.key', 'history.jsonl'])('%s replaced by a directory: the resume names the file and the operation (not a bare EISDIR), exits 1 and pays nothing more', async (file) => {
    const { stateDir, args } = copy(`${file.replace(/\W+/g, '-')}-a-directory`);
    rmSync(join(stateDir, file), { force: true }); // the index may not have been written before the kill
    mkdirSync(join(stateDir, file));
    const resumed = await savepoint(args('resume', runId, '--json'));
    expect(resumed.code, resumed.stderr).toBe(1);
    expect(resumed.stderr).toMatch(new RegExp(`^savepoint: cannot (read|open) \\S+/${file.replace('.', '\\.')}: it is a directory \\(EISDIR\\)$`, 'm'));
    expect(providerJournal(stateDir)).toHaveLength(paidBeforeDamage);
  });

  it("a second agent's ledger deleted (agents/<name>/, its head and seal key left): `runs` and `status` name the deletion, not list the other agent's runs as if it had none", async () => {
    const { stateDir } = copy('second-agent-ledger-deleted');
    // What `savepoint serve --agent a --agent b` keeps for b: a ledger directory of its own under agents/b/.
    const second = join(stateDir, 'agents', 'second');
    mkdirSync(join(second, 'keys'), { recursive: true });
    for (const file of ['ledger.jsonl', 'ledger.head', 'keys/ledger-seal.key']) cpSync(join(stateDir, file), join(second, file));
    const listed = await savepoint(['--state-dir', stateDir, 'runs']);
    expect(listed.code, listed.stderr).toBe(0);
    rmSync(ledgerFile(second));
    for (const command of [['runs'], ['status', runId]]) {
      const refused = await savepoint(['--state-dir', stateDir, ...command]);
      expect(refused.code, `${command.join(' ')}: ${refused.stdout}`).toBe(1);
      expect(refused.stderr).toMatch(/ledger integrity: record \S+agents\/second\/ledger\.jsonl fails verification: the file is missing, but \S+agents\/second\/ledger\.head records \d+ lines of it \(the ledger was deleted\)/);
    }
  });

  it('the ledger deleted: `resume <runId>` as the CLI prints it (no --agent) names the deletion, and `world` still shows what was paid, not "nothing ran there"', async () => {
    const { stateDir } = copy('ledger-deleted-bare');
    rmSync(ledgerFile(stateDir));
    const resumed = await savepoint(['--state-dir', stateDir, 'resume', runId]);
    expect(resumed.code, resumed.stderr).toBe(1);
    expect(resumed.stderr).toMatch(/ledger integrity: record \S+ledger\.jsonl fails verification: the file is missing, but \S+ledger\.head records \d+ lines of it \(the ledger was deleted\)/);
    expect(resumed.stderr).not.toMatch(/holds no ledger/);
    const world = await savepoint(['--state-dir', stateDir, 'world', '--json']);
    expect(world.code, world.stderr).toBe(0);
    expect(JSON.parse(world.stdout).refunds).toHaveLength(paidBeforeDamage);
    expect(providerJournal(stateDir)).toHaveLength(paidBeforeDamage);
  });

  it('`savepoint verify` passes the run once it is resumed to its end, and --all counts it', async () => {
    const { stateDir, args } = copy('good');
    const finished = await savepoint(args('resume', runId, '--json'));
    expect(finished.code, finished.stderr).toBe(0);
    const one = await savepoint(['--state-dir', stateDir, 'verify', runId]);
    expect(one.code, one.stderr).toBe(0);
    expect(one.stdout).toMatch(new RegExp(`^${runId}: OK, \\d+ records \\(\\d+ turns, \\d+ calls, 0 approvals\\) verify`));
    const all = await savepoint(['--state-dir', stateDir, 'verify', '--all', '--json']);
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({ ok: true, runs: [{ runId, problems: [] }] });
  });

  it('a damaged index (ledger.index) is named by every command that reads from it, and rebuilt once it is removed', async () => {
    const { stateDir } = copy('index');
    const status = ['--state-dir', stateDir, 'status', runId, '--json'];
    // The engine was killed before it could bring the index up to date: the first read does.
    const first = await savepoint(status);
    expect(first.code, first.stderr).toBe(0);
    const index = join(stateDir, 'ledger.index');
    const [body, mac] = readFileSync(index, 'utf8').split('\n');
    writeFileSync(index, `${body!.replace(/"TURN#0001",(\d+)/, (_m, offset: string) => `"TURN#0001",${Number(offset) + 1}`)}\n${mac}\n`);
    for (const command of [['status', runId], ['runs'], ['approvals'], ['verify', runId], ['verify', '--all']]) {
      const refused = await savepoint(['--state-dir', stateDir, ...command]);
      expect(refused.code, `${command.join(' ')}: ${refused.stderr}`).toBe(1);
      expect(refused.stderr).toMatch(/ledger integrity: record .*ledger\.index fails verification: its MAC does not match its content .*remove .*ledger\.index and the next read rebuilds it/);
    }
    rmSync(index);
    const rebuilt = await savepoint(status);
    expect(rebuilt.code, rebuilt.stderr).toBe(0);
    // The same run as before (its wall clock moved on: it is still running).
    const { status: was, lifecycle, steps } = JSON.parse(first.stdout) as Record<string, unknown>;
    expect(JSON.parse(rebuilt.stdout)).toMatchObject({ status: was, lifecycle, steps });
  });

  it('a ledger line altered after it was indexed is named by `status`, which reads it (not an "internal error")', async () => {
    const { stateDir } = copy('altered');
    // The first read brings the index up to date; the line is altered after it.
    expect((await savepoint(['--state-dir', stateDir, 'status', runId])).code).toBe(0);
    flipByte(stateDir);
    const refused = await savepoint(['--state-dir', stateDir, 'status', runId]);
    expect(refused.code, refused.stderr).toBe(1);
    expect(refused.stderr).toMatch(/^savepoint: ledger integrity: run refunds-2026-11-28, record \S+ledger\.jsonl at byte \d+ \(RUN#refunds-2026-11-28\/TURN#\d+\) fails verification: the line is not the one ledger\.index recorded there/m);
    expect(refused.stderr).not.toMatch(/internal error/);
  });

  it('`savepoint verify` is a usage error without a run id or --all, and for an unknown run', async () => {
    const { stateDir } = copy('usage');
    expect((await savepoint(['--state-dir', stateDir, 'verify'])).code).toBe(2);
    const unknown = await savepoint(['--state-dir', stateDir, 'verify', 'no-such-run']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/no run no-such-run/);
  });
});
