import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { INDEX_FILE } from '../../lambdas/ledger/ledger-index.js';
import { approval, at, breaker, budgetApproval, call, holder, kill, run, turn } from './fixtures.js';

/**
 * The embedded ledger's sealed index (lambdas/ledger/ledger-index.ts, issue 26 item 9): a ledger
 * opened to read from it answers every read exactly as the whole log, loaded and verified,
 * answers — with the index current, behind the log, or missing — and a damaged index, or a line
 * that is not the one it recorded, is refused by name.
 */
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * Two sessions of writes into one directory: runs a (succeeded, a decided approval), b (killed),
 * c (running, an approval pending, its task token), d (failed, a blob), then e (running, a budget
 * approval pending), an effect, a breaker and the global kill switch. Returns the index as it was
 * after the first session (behind the log).
 */
async function twoSessions(): Promise<{ dir: string; firstIndex: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'savepoint-index-'));
  dirs.push(dir);
  const first = EmbeddedLedger.open({ dir });
  for (const [runId, second] of [['a', 0], ['b', 5], ['c', 5], ['d', 9]] as const) {
    await first.createRun(run(runId, { createdAt: at(second).toISOString() }));
    await first.recordTurn(turn(1, `first of ${runId}`, runId));
    await first.recordTurn(turn(2, `second of ${runId}`, runId));
  }
  await first.putBlob('d', 'd1', ['chunk one of d', 'chunk two of d']);
  await first.upsertApproval(approval({ runId: 'a', approvalId: 'apv_a', turn: 1, call: 1 }), 'token-a');
  await first.decideApproval({ runId: 'a', turn: 1, call: 1 }, { status: 'approved', decidedBy: 'alice' }, at(3));
  await first.upsertApproval(approval({ runId: 'c', approvalId: 'apv_c', turn: 2, call: 1 }), 'token-c');
  await first.finishRun('a', { status: 'succeeded' }, at(10));
  await first.finishRun('b', { status: 'killed', stopReason: 'killed' }, at(20));
  await first.finishRun('d', { status: 'failed', error: { error: 'Agent.Transient', cause: 'x' } }, at(30));
  first.close();
  const firstIndex = join(dir, 'first.index');
  copyFileSync(join(dir, INDEX_FILE), firstIndex);

  const second = EmbeddedLedger.open({ dir });
  await second.createRun(run('e', { createdAt: at(7).toISOString() }));
  await second.upsertApproval({ ...budgetApproval(1), runId: 'e' }, 'token-e');
  await second.claimCall(call({ runId: 'e', turn: 1, effectKey: holder().key }), at(1), holder({ runId: 'e', turn: 1 }));
  await second.saveBreaker(breaker('model', 1, 'open'));
  await second.recordTurn(turn(3, 'third of c', 'c'));
  await second.setGlobalKill(kill('ops'));
  second.close();
  return { dir, firstIndex };
}

/** Every read a command makes, as [what it is, the answer]. */
async function answers(ledger: EmbeddedLedger): Promise<[string, unknown][]> {
  const rows: [string, unknown][] = [];
  const ask = async (what: string, read: () => Promise<unknown> | unknown) => rows.push([what, await read()]);
  for (const runId of ['a', 'b', 'c', 'd', 'e', 'nobody']) {
    await ask(`getRun ${runId}`, () => ledger.getRun(runId));
    await ask(`listConversation ${runId}`, () => ledger.listConversation(runId));
  }
  for (const limit of [1, 2, 3, 100]) await ask(`listRuns ${limit}`, () => ledger.listRuns(limit));
  await ask('listRunningRuns', () => ledger.listRunningRuns());
  await ask('listPendingApprovals', () => ledger.listPendingApprovals());
  for (const id of ['apv_a', 'apv_c', 'apv_budget_steps_1', 'apv_none']) await ask(`findApproval ${id}`, () => ledger.findApproval(id));
  await ask('getTaskToken c', () => ledger.getTaskToken({ runId: 'c', turn: 2, call: 1 }));
  await ask('getBlob d', () => ledger.getBlob('d', 'd1'));
  await ask('getEffect', () => ledger.getEffect(holder().key));
  await ask('getBreaker', () => ledger.getBreaker('model'));
  await ask('getGlobalKill', () => ledger.getGlobalKill());
  await ask('getBudgetApproval e', () => ledger.getBudgetApproval('e', 'steps', 1));
  await ask('loadStep c', () => ledger.loadStep('c', { turns: [1, 3], breaker: 'model' }));
  await ask('prunes', () => ledger.prunes());
  return rows;
}

async function wholeAnswers(dir: string): Promise<[string, unknown][]> {
  const whole = EmbeddedLedger.open({ dir });
  try {
    return await answers(whole);
  } finally {
    whole.close();
  }
}

describe('a ledger opened to read from its index', () => {
  it.each([
    ['current', (_dir: string, _first: string) => undefined],
    ['behind the log (the lines after it read and chain-checked)', (dir: string, first: string) => copyFileSync(first, join(dir, INDEX_FILE))],
    ['missing (a ledger from before the index: rebuilt from the whole log)', (dir: string) => rmSync(join(dir, INDEX_FILE))],
  ])('answers every read as the whole log does, with the index %s', async (_name, prepare) => {
    const { dir, firstIndex } = await twoSessions();
    const expected = await wholeAnswers(dir);
    prepare(dir, firstIndex);
    for (const verify of [false, true]) {
      const read = EmbeddedLedger.openToRead({ dir, verify });
      try {
        expect(await answers(read)).toEqual(expected);
      } finally {
        read.close();
      }
    }
    // The reader brought the index up to date: private, and current for the next one.
    expect(statSync(join(dir, INDEX_FILE)).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(dir, INDEX_FILE), 'utf8')).not.toBe(readFileSync(firstIndex, 'utf8'));
  });

  it('is rebuilt, not trusted, when a prune has rewritten the log since it was written', async () => {
    const { dir } = await twoSessions();
    const stale = readFileSync(join(dir, INDEX_FILE));
    const ledger = EmbeddedLedger.open({ dir });
    expect((await ledger.prune(at(25), at(100)))[0]?.runIds).toEqual(['a', 'b']);
    ledger.close();
    writeFileSync(join(dir, INDEX_FILE), stale);
    const expected = await wholeAnswers(dir);
    writeFileSync(join(dir, INDEX_FILE), stale);
    const read = EmbeddedLedger.openToRead({ dir });
    try {
      expect(await answers(read)).toEqual(expected);
      expect(await read.getRun('a')).toBeUndefined();
    } finally {
      read.close();
    }
  });

  it('reads no line of a run it is not asked for', async () => {
    const { dir } = await twoSessions();
    // Each of a's lines cut to garbage of the same length: invisible to a reader of c and of the runs' list past a.
    const path = join(dir, 'ledger.jsonl');
    const damaged = readFileSync(path, 'utf8')
      .split('\n')
      .map((line) => (line.startsWith('{"pk":"RUN#a","sk":"TURN#') ? 'x'.repeat(line.length) : line))
      .join('\n');
    writeFileSync(path, damaged);
    const read = EmbeddedLedger.openToRead({ dir });
    try {
      expect((await read.listConversation('c')).turns).toHaveLength(3);
      expect((await read.listRuns(100)).map((r) => r.runId)).toEqual(['d', 'e', 'c', 'b', 'a']);
      await expect(read.listConversation('a')).rejects.toThrow(/record .*ledger\.jsonl at byte \d+ \(RUN#a\/TURN#000\d\) fails verification: the line is not the one ledger\.index recorded/);
    } finally {
      read.close();
    }
  });

  it("names a run whose record fails its check in the runs' list, and lists the others", async () => {
    const { dir } = await twoSessions();
    const path = join(dir, 'ledger.jsonl');
    // The newest line of run b's record, one letter changed (same length).
    const lines = readFileSync(path, 'utf8').split('\n');
    const at = lines.map((line) => line.startsWith('{"pk":"RUN#b","sk":"RUN"')).lastIndexOf(true);
    lines[at] = lines[at]!.replace('"status":"killed"', '"status":"kil1ed"');
    writeFileSync(path, lines.join('\n'));
    const read = EmbeddedLedger.openToRead({ dir });
    try {
      const damaged: string[] = [];
      const runs = await read.listRuns(100, { onDamaged: (runId, error) => damaged.push(`${runId}: ${error.message}`) });
      expect(runs.map((r) => r.runId)).toEqual(['d', 'e', 'c', 'a']);
      expect(damaged).toEqual([expect.stringMatching(/^b: ledger integrity: run b, record .*ledger\.jsonl at byte \d+ \(RUN#b\/RUN\) fails verification/)]);
    } finally {
      read.close();
    }
  });

  it("reads an agent's run records newest first only until its limit, and none created after notAfter", async () => {
    const { dir } = await twoSessions();
    const path = join(dir, 'ledger.jsonl');
    // Run a's (the oldest) and run d's (the newest) record lines cut to garbage of the same length.
    const damaged = readFileSync(path, 'utf8')
      .split('\n')
      .map((line) => (/^\{"pk":"RUN#[ad]","sk":"RUN"/.test(line) ? 'x'.repeat(line.length) : line))
      .join('\n');
    writeFileSync(path, damaged);
    const read = EmbeddedLedger.openToRead({ dir });
    try {
      const named: string[] = [];
      const onDamaged = (runId: string) => void named.push(runId);
      // The newest of them is d, created at 9 s: not read below 9 s; a is past the limit of 2.
      expect((await read.listRunsOf('refund-reconciler', 2, { onDamaged, notAfter: at(8).toISOString() })).map((r) => r.runId)).toEqual(['e', 'c']);
      expect(named).toEqual([]);
      expect((await read.listRunsOf('refund-reconciler', 10, { onDamaged })).map((r) => r.runId)).toEqual(['e', 'c', 'b']);
      expect(named).toEqual(['d', 'a']);
    } finally {
      read.close();
    }
  });
});

describe('a damaged index is refused, naming it', () => {
  /** The index's JSON body and its MAC line. */
  const parts = (dir: string) => readFileSync(join(dir, INDEX_FILE), 'utf8').split('\n');
  it.each([
    ['a byte of it changed', (dir: string) => {
      const [body, mac] = parts(dir);
      writeFileSync(join(dir, INDEX_FILE), `${body!.replace('"RUN#b","killed"', '"RUN#b","running"')}\n${mac}\n`);
    }],
    ['a line it points to moved (an offset changed, the MAC kept)', (dir: string) => {
      const [body, mac] = parts(dir);
      writeFileSync(join(dir, INDEX_FILE), `${body!.replace(/"TURN#0001",(\d+)/, (_m, offset: string) => `"TURN#0001",${Number(offset) + 1}`)}\n${mac}\n`);
    }],
    ['its MAC replaced by another index\'s', (dir: string) => {
      const [body] = parts(dir);
      const [, otherMac] = readFileSync(join(dir, 'first.index'), 'utf8').split('\n');
      writeFileSync(join(dir, INDEX_FILE), `${body}\n${otherMac}\n`);
    }],
    ['cut short', (dir: string) => writeFileSync(join(dir, INDEX_FILE), readFileSync(join(dir, INDEX_FILE)).subarray(0, 200))],
    ['emptied', (dir: string) => writeFileSync(join(dir, INDEX_FILE), '')],
  ])('%s: every read open, verify too, fails naming ledger.index and the way back', async (_name, damage) => {
    const { dir } = await twoSessions();
    const before = readFileSync(join(dir, INDEX_FILE), 'utf8');
    damage(dir);
    expect(readFileSync(join(dir, INDEX_FILE), 'utf8')).not.toBe(before);
    for (const verify of [false, true]) {
      expect(() => EmbeddedLedger.openToRead({ dir, verify })).toThrow(/ledger integrity: record .*ledger\.index fails verification: its MAC does not match its content .*remove .*ledger\.index and the next read rebuilds it from the log/);
    }
    // The way back: without it, the next read rebuilds it from the log (every chain checked).
    rmSync(join(dir, INDEX_FILE));
    const read = EmbeddedLedger.openToRead({ dir });
    read.close();
    expect(existsSync(join(dir, INDEX_FILE))).toBe(true);
  });
});
