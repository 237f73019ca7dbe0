import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { CrashPoint } from '../../local/runtime/crash.js';
import { ledgerOf, providerJournal, savepoint, workspace } from '../support/cli-process.js';

/**
 * A deleted (or cut) provider journal next to a ledger that remembers payments is reported, not
 * ignored: through the real CLI, a run killed after it paid two refunds, then its journal lost,
 * then resumed. The ledger says two refunds were paid; the provider would have forgotten them and
 * paid them again. The resume refuses, naming the journal, and changes nothing.
 */

const runId = 'refunds-2026-11-28';
const day = makeSampleDay(11, { plain: 3, already_refunded: 0, mismatch: 0, large: 0 });

let crashed: { stateDir: string; args: (...more: string[]) => string[] };
beforeAll(async () => {
  // One run killed after it paid two refunds; each case loses the journal of its own copy of it.
  crashed = await workspace('lost-journal', day);
  const killed = await savepoint(crashed.args('run', '--json', '--crash-at', `${CrashPoint.AfterRecord}:issue_refund:2`));
  expect(killed.signal, killed.stderr).toBe('SIGKILL');
}, 120_000);
afterAll(() => rmSync(dirname(crashed.stateDir), { recursive: true, force: true }));

/** A copy of the killed run's state directory. */
function copy(name: string): { stateDir: string; args: (...more: string[]) => string[] } {
  const stateDir = `${crashed.stateDir}-${name}`;
  cpSync(crashed.stateDir, stateDir, { recursive: true });
  return { stateDir, args: (...more) => crashed.args(...more).map((arg) => (arg === crashed.stateDir ? stateDir : arg)) };
}

describe('a lost provider journal next to a ledger that remembers payments', { timeout: 120_000 }, () => {
  // The restore is the same file whichever way it was lost: the first case finishes the run from it.
  it.each([
    ['deleted', (file: string) => rmSync(file), true],
    ['cut to its first line', (file: string) => writeFileSync(file, `${readFileSync(file, 'utf8').split('\n')[0]}\n`), false],
  ])('%s: resume exits non-zero naming the journal, and pays nothing again', async (how, lose, thenRestore) => {
    const { stateDir, args } = copy(how.replace(/\W+/g, '-'));
    const paid = providerJournal(stateDir).filter((entry) => entry.kind === 'refund');
    expect(paid).toHaveLength(2);
    const before = await ledgerOf(stateDir, runId);
    expect(before.calls.filter((call) => call.name === 'issue_refund' && call.status === 'completed')).toHaveLength(2);

    const journal = join(stateDir, 'payments.jsonl');
    lose(journal);
    const kept = existsSync(journal) ? readFileSync(journal, 'utf8') : undefined;
    const resumed = await savepoint(args('resume', runId, '--json'));
    expect(resumed.code, resumed.stdout).not.toBe(0);
    expect(resumed.stderr).toContain(journal);
    expect(resumed.stderr).toMatch(/the ledger records 2 completed issue_refund call\(s\), the journal holds [01]/);
    expect(resumed.stderr).toMatch(/restore the journal from a backup, or start over in a new --state-dir/);
    expect(resumed.stderr).not.toMatch(/^\s+at /m);

    // Nothing changed: the journal as it was left (not recreated), the ledger's calls as they were.
    expect(existsSync(journal) ? readFileSync(journal, 'utf8') : undefined).toBe(kept);
    const after = await ledgerOf(stateDir, runId);
    expect(after.calls).toEqual(before.calls);
    if (!thenRestore) return;

    // Restored, the run finishes and pays each refund once.
    writeFileSync(journal, paid.map((entry) => JSON.stringify(entry)).join('\n') + '\n');
    const finished = await savepoint(args('resume', runId, '--json'));
    expect(finished.code, finished.stderr).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({ status: 'succeeded', summary: { issued: 3 } });
    const refunds = providerJournal(stateDir).filter((entry) => entry.kind === 'refund').map((entry) => entry.record.refundRequestId);
    expect(new Set(refunds).size).toBe(3);
    expect(refunds).toHaveLength(3);
  });
});

describe('a wiped ledger next to a provider journal that remembers payments', { timeout: 120_000 }, () => {
  it('run exits non-zero naming the journal and the unknown records, and pays nothing again', async () => {
    const { stateDir, args } = copy('wiped-ledger');
    const journal = join(stateDir, 'payments.jsonl');
    const kept = readFileSync(journal, 'utf8');
    expect(providerJournal(stateDir).filter((entry) => entry.kind === 'refund')).toHaveLength(2);
    for (const name of ['ledger.jsonl', 'ledger.head', 'keys']) rmSync(join(stateDir, name), { recursive: true, force: true });

    const started = await savepoint(args('run', '--json'));
    expect(started.code, started.stdout).not.toBe(0);
    expect(started.stderr).toContain(journal);
    expect(started.stderr).toMatch(/does not know the runs that made the provider's records — the journal holds \d+ record\(s\) whose idempotency key no call in the ledger claimed \(the first: refund-reconciler:issue_refund:/);
    expect(started.stderr).toMatch(/restore the ledger \(ledger\.jsonl, ledger\.head, keys\/\) from a backup, or start over in a new --state-dir/);
    expect(started.stderr).not.toMatch(/^\s+at /m);
    expect(readFileSync(journal, 'utf8')).toBe(kept);
  });
});
