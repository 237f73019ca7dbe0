import { existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { approval, at, call, holder, run, turn } from './fixtures.js';
import { fourRuns } from './spec/prune.js';

/**
 * The embedded ledger's tiers (issue 26, item 9): what it keeps in memory, what it lets go of to
 * the log and notes in ledger.cold/, and how it reads either back — `openToRead` one run in time
 * and memory that do not grow with the others, an engine's finished runs and effects past what it
 * retains. What bounds a long-lived state directory, with `prune` (test/contract/spec/prune.ts).
 */
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A ledger on disk with runs a (succeeded), b (killed), c (running), d (failed), each with two turns and a blob; a's call holds an effect (spec/prune.ts `fourRuns`). */
async function fourRunsOnDisk(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'savepoint-tiers-'));
  dirs.push(dir);
  const ledger = EmbeddedLedger.open({ dir });
  await fourRuns(ledger);
  ledger.close();
  return dir;
}

describe('EmbeddedLedger.openToRead', () => {
  it("reads one run's records as a whole open does", async () => {
    const dir = await fourRunsOnDisk();
    const whole = EmbeddedLedger.open({ dir });
    const expected = [await whole.getRun('b'), await whole.listConversation('b'), await whole.getBlob('b', 'd1'), await whole.getEffect('refunds:issue_refund:rr_1')];
    whole.close();
    const one = EmbeddedLedger.openToRead({ dir });
    try {
      expect([await one.getRun('b'), await one.listConversation('b'), await one.getBlob('b', 'd1'), await one.getEffect('refunds:issue_refund:rr_1')]).toEqual(expected);
      await expect(one.createRun(run('e'))).rejects.toThrow(/opened to read .* takes no write/);
    } finally {
      one.close();
    }
  });

  it("reads a run past another run's altered line, names that line when it is read, and verify refuses the log", async () => {
    const dir = await fourRunsOnDisk();
    const path = join(dir, 'ledger.jsonl');
    writeFileSync(path, readFileSync(path, 'utf8').replace('first of c', 'first of C'));
    const one = EmbeddedLedger.openToRead({ dir });
    try {
      expect((await one.listConversation('b')).turns).toHaveLength(2);
      await expect(one.listConversation('c')).rejects.toThrow(/record .*ledger\.jsonl at byte \d+ \(RUN#c\/TURN#0001\) fails verification: the line is not the one ledger\.index recorded there/);
    } finally {
      one.close();
    }
    expect(() => EmbeddedLedger.openToRead({ dir, verify: true })).toThrow(/ledger\.jsonl:\d+ \(RUN#c\/TURN#0001\).*does not follow from the lines before it/);
  });

  it('refuses a log cut short of its head, as a whole open does', async () => {
    const dir = await fourRunsOnDisk();
    const path = join(dir, 'ledger.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    writeFileSync(path, `${lines.slice(0, -3).join('\n')}\n`);
    expect(() => EmbeddedLedger.openToRead({ dir })).toThrow(/were lost \(truncated\)/);
  });
});

describe('finished runs out of memory (retainFinishedRuns)', () => {
  it("reads an evicted run's records back from the log, checking each line against what was noted of it", async () => {
    const dir = await fourRunsOnDisk();
    const ledger = EmbeddedLedger.open({ dir, retainFinishedRuns: 1 });
    try {
      // a and b finished; b was used last, so a's records are on disk only. Its turn, altered there:
      const path = join(dir, 'ledger.jsonl');
      expect((await ledger.listConversation('a')).turns.map((record) => record.turn)).toEqual([1, 2]);
      await ledger.getRun('b');
      expect((await ledger.listRuns(10)).map((run) => run.runId).sort()).toEqual(['a', 'b', 'c', 'd']);
      writeFileSync(path, readFileSync(path, 'utf8').replace('first of a', 'first of A'));
      // The open noted each line's hash (from the index): the altered line is refused, named.
      await expect(ledger.listConversation('a')).rejects.toThrow(/run a, record .*ledger\.jsonl at byte \d+ \(RUN#a\/TURN#0001\) fails verification: the line is not the one ledger\.cold recorded there/);
      // A run still running is in memory: the file is not read for it.
      writeFileSync(path, readFileSync(path, 'utf8').replace('first of c', 'first of C'));
      expect((await ledger.listConversation('c')).turns[0]).toMatchObject({ content: [{ type: 'text', text: 'first of c' }] });
    } finally {
      ledger.close();
    }
  });
});

describe('what the engine lets go of from memory (ledger.cold/)', () => {
  /** `count` runs, each with a turn, an effect of its own (claimed and completed) and a decided approval, all finished; one ledger kept open. */
  async function finishedRuns(count: number, options: Parameters<typeof EmbeddedLedger.open>[0] = {}) {
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-cold-'));
    dirs.push(dir);
    const ledger = EmbeddedLedger.open({ dir, retainFinishedRuns: 1, retainEffects: 1, listedFinishedRuns: 2, ...options });
    for (let i = 1; i <= count; i++) {
      const runId = `run${i}`;
      await ledger.createRun(run(runId, { createdAt: at(i).toISOString() }));
      await ledger.recordTurn(turn(1, `turn of ${runId}`, runId));
      const key = `refunds:issue_refund:rr_${i}`;
      await ledger.claimCall(call({ runId, effectKey: key }), at(i), holder({ key, runId }));
      await ledger.completeCall({ runId, turn: 3, call: 1, outcome: { outcome: 'ok', result: `{"paid":${i}}`, latencyMs: 1 }, now: at(i), effect: { key } });
      await ledger.upsertApproval(approval({ runId, approvalId: `apv_${String(i).padStart(16, '0')}` }), `token-${i}`);
      await ledger.decideApproval({ runId, turn: 3, call: 1 }, { status: 'approved', decidedBy: 'alice' }, at(i));
      await ledger.finishRun(runId, { status: 'succeeded' }, at(i + 1));
    }
    return { dir, ledger };
  }

  it("reads back a run, its effect and its approval after they were let go of, and lists the newest runs past the list's end", async () => {
    const { dir, ledger } = await finishedRuns(6);
    try {
      expect(readdirSync(join(dir, 'ledger.cold')).length).toBeGreaterThan(0);
      expect((await ledger.getRun('run2'))?.status).toBe('succeeded');
      expect((await ledger.listConversation('run2')).turns.map((record) => record.content)).toEqual([[{ type: 'text', text: 'turn of run2' }]]);
      expect(await ledger.getEffect('refunds:issue_refund:rr_3')).toMatchObject({ runId: 'run3' });
      expect(await ledger.findApproval('apv_0000000000000004')).toMatchObject({ runId: 'run4', status: 'approved' });
      // The list holds the two newest runs let go of; the four others come from the cold store.
      expect((await ledger.listRuns(2)).map((r) => r.runId)).toEqual(['run6', 'run5']);
      expect((await ledger.listRuns(10)).map((r) => r.runId)).toEqual(['run6', 'run5', 'run4', 'run3', 'run2', 'run1']);
      // Another run's claim of an effect let go of still finds its holder: the effect is not paid twice.
      const again = await ledger.claimCall(call({ runId: 'run9', effectKey: 'refunds:issue_refund:rr_1' }), at(50), holder({ key: 'refunds:issue_refund:rr_1', runId: 'run9' }));
      expect(JSON.stringify(again)).toContain('run1');
    } finally {
      ledger.close();
    }
  });

  it('lists the newest of the runs of one instant let go of in the one order of runs (by run id, descending), from the list an open makes as from the one kept since', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-cold-'));
    dirs.push(dir);
    const options = { dir, retainFinishedRuns: 1, listedFinishedRuns: 2 };
    const ids = (runs: { runId: string }[]) => runs.map((listed) => listed.runId);
    let ledger = EmbeddedLedger.open(options);
    try {
      // Created in one millisecond, ended (and let go of) in neither order: the list holds two of them.
      const runIds = ['run-B', 'run-a', 'run-E', 'run-c', 'run-D'];
      for (const runId of runIds) await ledger.createRun(run(runId, { createdAt: at(5).toISOString() }));
      for (const runId of runIds) await ledger.finishRun(runId, { status: 'succeeded' }, at(10));
      expect(ids(await ledger.listRuns(2))).toEqual(['run-E', 'run-D']);
      ledger.close();
      // Opened anew: the list made from the runs let go of, in the order of the log.
      ledger = EmbeddedLedger.open(options);
      expect(ids(await ledger.listRuns(2))).toEqual(['run-E', 'run-D']);
      expect(ids(await ledger.listRuns())).toEqual(['run-E', 'run-D', 'run-c', 'run-B', 'run-a']);
    } finally {
      ledger.close();
    }
  });

  it('takes writes to a run that was let go of without losing its other records', async () => {
    const { ledger } = await finishedRuns(3);
    try {
      await ledger.putBlob('run1', 'd1', ['late blob']);
      expect(await ledger.getBlob('run1', 'd1')).toEqual(['late blob']);
      expect((await ledger.listConversation('run1')).turns).toHaveLength(1);
      expect(await ledger.getTaskToken({ runId: 'run1', turn: 3, call: 1 })).toBe('token-1');
    } finally {
      ledger.close();
    }
  });

  it('refuses a line of the cold store that was altered, naming its file', async () => {
    const { dir, ledger } = await finishedRuns(3);
    try {
      const cold = join(dir, 'ledger.cold');
      const bucket = readdirSync(cold).map((name) => join(cold, name)).find((path) => readFileSync(path, 'utf8').includes('"RUN#run1"'))!;
      // Pointing the run record at another of its lines (an older version of it): the bucket is not what the engine wrote (and the line's MAC fails).
      const text = readFileSync(bucket, 'utf8');
      const altered = text.replace(/("RUN#run1","RUN",)(\d+)/, (_m, head, offset) => `${head}${Number(offset) - 1}`);
      expect(altered).not.toBe(text);
      writeFileSync(bucket, altered);
      await expect(ledger.getRun('run1')).rejects.toThrow(/ledger\.cold\/[0-9a-f]{2}\.jsonl fails verification: the bucket file is not what the engine wrote \(altered/);
    } finally {
      ledger.close();
    }
  });

  it("refuses a run let go of whose line in the log was replaced by an older line of the same record", async () => {
    const { dir, ledger } = await finishedRuns(3);
    ledger.close();
    // The log's first RUN#run1 line (the run still running) moved to where its last one (succeeded) was.
    const path = join(dir, 'ledger.jsonl');
    const lines = readFileSync(path, 'utf8').split('\n');
    const runLines = lines.map((text, index) => [text, index] as const).filter(([text]) => text.startsWith('{"pk":"RUN#run1","sk":"RUN",'));
    const reopened = EmbeddedLedger.open({ dir, retainFinishedRuns: 1, retainEffects: 1 });
    try {
      expect(existsSync(join(dir, 'ledger.cold'))).toBe(true);
      const [first] = runLines[0]!;
      const [last, lastIndex] = runLines.at(-1)!;
      expect(first).not.toBe(last);
      // Same length, so that no other line moves: pad the older line's record to the newer one's length.
      const padded = first.replace('"record":{', `"record":{"pad":"${'x'.repeat(last.length - first.length - '"pad":"",'.length)}",`);
      expect(padded.length).toBe(last.length);
      lines[lastIndex] = padded;
      writeFileSync(path, lines.join('\n'));
      await expect(reopened.getRun('run1')).rejects.toThrow(/RUN#run1\/RUN\).*not the one ledger\.cold recorded there/);
    } finally {
      reopened.close();
    }
  });

  it('is made only once something is let go of: an open that lets go of nothing removes what an earlier one left, and makes no directory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-cold-'));
    dirs.push(dir);
    const first = EmbeddedLedger.open({ dir });
    await first.createRun(run('running', { createdAt: at(1).toISOString() }));
    first.close();
    mkdirSync(join(dir, 'ledger.cold'));
    writeFileSync(join(dir, 'ledger.cold', 'planted.jsonl'), 'not a line of the store\n');
    // A running run stays in memory: nothing to note, no directory.
    const keeping = EmbeddedLedger.open({ dir });
    try {
      expect(existsSync(join(dir, 'ledger.cold'))).toBe(false);
      await keeping.finishRun('running', { status: 'succeeded' }, at(2));
    } finally {
      keeping.close();
    }
    // A finished run is let go of as the ledger opens: noted in the directory, and read back from there.
    const letting = EmbeddedLedger.open({ dir });
    try {
      expect(readdirSync(join(dir, 'ledger.cold')).map((name) => readFileSync(join(dir, 'ledger.cold', name), 'utf8')).join('')).toContain('["g","RUN#running",');
      expect(await letting.getRun('running')).toMatchObject({ runId: 'running', status: 'succeeded' });
    } finally {
      letting.close();
    }
  });

  /**
   * The files of `dir`'s ledger.cold/ now, held by hard links elsewhere: `replaced()` names those an
   * open since made anew (or removed), and any file it added.
   */
  function holdCold(dir: string) {
    const cold = join(dir, 'ledger.cold');
    const held = mkdtempSync(join(tmpdir(), 'savepoint-held-'));
    dirs.push(held);
    const names = readdirSync(cold).sort();
    for (const name of names) linkSync(join(cold, name), join(held, name));
    const same = (name: string) => existsSync(join(cold, name)) && statSync(join(cold, name)).ino === statSync(join(held, name)).ino;
    return { names, replaced: () => [...names.filter((name) => !same(name)), ...readdirSync(cold).filter((name) => !names.includes(name))] };
  }

  /** What `finishedRuns(count)` wrote, read back (from ledger.cold/ for the runs let go of). */
  async function readsBack(ledger: EmbeddedLedger, count: number) {
    const ids = Array.from({ length: count }, (_, i) => `run${count - i}`);
    expect((await ledger.listRuns(count + 5)).map((r) => r.runId)).toEqual(ids);
    for (let i = 1; i <= count; i++) {
      expect((await ledger.listConversation(`run${i}`)).turns.map((record) => record.content)).toEqual([[{ type: 'text', text: `turn of run${i}` }]]);
      expect(await ledger.getEffect(`refunds:issue_refund:rr_${i}`)).toMatchObject({ runId: `run${i}` });
      expect(await ledger.findApproval(`apv_${String(i).padStart(16, '0')}`)).toMatchObject({ runId: `run${i}`, status: 'approved' });
    }
  }

  /** A ledger of `count` finished runs closed, then opened and closed again: its ledger.cold/ as that open built it. */
  async function built(count: number) {
    const { dir, ledger } = await finishedRuns(count);
    ledger.close();
    EmbeddedLedger.open({ dir }).close();
    expect(existsSync(join(dir, 'ledger.cold', 'built.json'))).toBe(true);
    return dir;
  }

  it('is kept as it is by an open of the log it was built from: an open that writes nothing, or whose write is refused, writes none of its files', async () => {
    const dir = await built(4);
    const held = holdCold(dir);
    expect(held.names.length).toBeGreaterThan(2);
    const ledger = EmbeddedLedger.open({ dir, retainFinishedRuns: 1, retainEffects: 1, listedFinishedRuns: 2 });
    try {
      // A kill of a run there is not: refused, nothing written (as `savepoint kill` of a run that ended is refused).
      expect(await ledger.killRun('run9', { by: 'alice', at: at(60).toISOString(), reason: 'no such run' })).toBe(false);
      await readsBack(ledger, 4);
    } finally {
      ledger.close();
    }
    expect(held.replaced()).toEqual([]);
  });

  it('is made anew when the log was appended to since it was built: a late write to a run it held (read back, never let go of again) is found', async () => {
    const dir = await built(3);
    const held = holdCold(dir);
    const ledger = EmbeddedLedger.open({ dir });
    try {
      await ledger.putBlob('run1', 'd1', ['late blob']);
    } finally {
      ledger.close();
    }
    // run1's group stayed in memory (16 finished runs are): ledger.cold/ still holds it as it was built, without the blob.
    expect(held.replaced()).toEqual([]);
    const reopened = EmbeddedLedger.open({ dir, retainFinishedRuns: 1, retainEffects: 1, listedFinishedRuns: 2 });
    try {
      expect(held.replaced()).toEqual(expect.arrayContaining(held.names));
      expect(await reopened.getBlob('run1', 'd1')).toEqual(['late blob']);
      await readsBack(reopened, 3);
    } finally {
      reopened.close();
    }
  });

  it('claims no build once noted in after it (runs let go of since), and is made anew at the next open', async () => {
    const dir = await built(3);
    const held = holdCold(dir);
    const ledger = EmbeddedLedger.open({ dir, retainFinishedRuns: 1, retainEffects: 1, listedFinishedRuns: 2 });
    try {
      // Kept at open; then two more runs finish and one of them is let go of into it: it is no longer the build.
      expect(held.replaced()).toEqual([]);
      for (const i of [4, 5]) {
        await ledger.createRun(run(`run${i}`, { createdAt: at(i).toISOString() }));
        await ledger.recordTurn(turn(1, `turn of run${i}`, `run${i}`));
        const key = `refunds:issue_refund:rr_${i}`;
        await ledger.claimCall(call({ runId: `run${i}`, effectKey: key }), at(i), holder({ key, runId: `run${i}` }));
        await ledger.completeCall({ runId: `run${i}`, turn: 3, call: 1, outcome: { outcome: 'ok', result: `{"paid":${i}}`, latencyMs: 1 }, now: at(i), effect: { key } });
        await ledger.upsertApproval(approval({ runId: `run${i}`, approvalId: `apv_${String(i).padStart(16, '0')}` }), `token-${i}`);
        await ledger.decideApproval({ runId: `run${i}`, turn: 3, call: 1 }, { status: 'approved', decidedBy: 'alice' }, at(i));
        await ledger.finishRun(`run${i}`, { status: 'succeeded' }, at(i + 1));
      }
      expect(existsSync(join(dir, 'ledger.cold', 'built.json'))).toBe(false);
      await readsBack(ledger, 5);
    } finally {
      ledger.close();
    }
    const reopened = EmbeddedLedger.open({ dir, retainFinishedRuns: 1, retainEffects: 1, listedFinishedRuns: 2 });
    try {
      expect(held.replaced()).toEqual(expect.arrayContaining(held.names));
      expect(existsSync(join(dir, 'ledger.cold', 'built.json'))).toBe(true);
      await readsBack(reopened, 5);
    } finally {
      reopened.close();
    }
  });

  // Each as an earlier process, a crash or a person may leave it; each made anew at the next open, and every record found.
  it.each<[string, (cold: string, bucket: string) => void]>([
    ['a bucket altered (its run record pointed at an older line of it)', (_cold, bucket) => writeFileSync(bucket, readFileSync(bucket, 'utf8').replace(/("RUN#run1","RUN",)(\d+)/, (_m, head, offset) => `${head}${Number(offset) - 1}`))],
    ['a bucket cut short', (_cold, bucket) => writeFileSync(bucket, readFileSync(bucket, 'utf8').slice(0, -10))],
    ['a bucket deleted', (_cold, bucket) => unlinkSync(bucket)],
    ['a file added', (cold) => writeFileSync(join(cold, 'planted.jsonl'), 'not a line of the store\n')],
    ['built.json altered', (cold) => writeFileSync(join(cold, 'built.json'), readFileSync(join(cold, 'built.json'), 'utf8').replace('"format":1', '"format":1 '))],
    ['a build cut short by a crash before built.json (a bucket half written)', (cold, bucket) => {
      unlinkSync(join(cold, 'built.json'));
      writeFileSync(bucket, readFileSync(bucket, 'utf8').slice(0, 30));
    }],
    ['a build cut short by a crash writing built.json', (cold) => writeFileSync(join(cold, 'built.json'), readFileSync(join(cold, 'built.json'), 'utf8').slice(0, -20))],
  ])('is made anew when damaged: %s', async (_name, damage) => {
    const dir = await built(4);
    const cold = join(dir, 'ledger.cold');
    const bucket = readdirSync(cold).map((name) => join(cold, name)).find((path) => readFileSync(path, 'utf8').includes('"RUN#run1"'))!;
    const whole = readFileSync(bucket, 'utf8');
    damage(cold, bucket);
    const held = holdCold(dir);
    const ledger = EmbeddedLedger.open({ dir, retainFinishedRuns: 1, retainEffects: 1, listedFinishedRuns: 2 });
    try {
      expect(held.replaced()).toEqual(expect.arrayContaining(held.names.filter((name) => name !== 'planted.jsonl')));
      expect(readdirSync(cold)).not.toContain('planted.jsonl');
      expect(readFileSync(bucket, 'utf8')).toBe(whole);
      await readsBack(ledger, 4);
    } finally {
      ledger.close();
    }
  });

  it('is made anew by an open after a process that noted in it (a file planted there gone), and a prune goes through what was let go of', async () => {
    const { dir, ledger } = await finishedRuns(4);
    ledger.close();
    writeFileSync(join(dir, 'ledger.cold', 'planted.jsonl'), 'not a line of the store\n');
    const reopened = EmbeddedLedger.open({ dir, retainFinishedRuns: 1, retainEffects: 1, listedFinishedRuns: 1 });
    try {
      expect(readdirSync(join(dir, 'ledger.cold'))).not.toContain('planted.jsonl');
      // What the open read is let go of as what was written since: the runs and the effects past the one of each kept.
      const noted = readdirSync(join(dir, 'ledger.cold')).map((name) => readFileSync(join(dir, 'ledger.cold', name), 'utf8')).join('');
      for (const i of [1, 2, 3]) expect(noted).toContain(`["g","EFFECT#refunds:issue_refund:rr_${i}",`);
      for (const i of [1, 2, 3]) expect(noted).toContain(`["g","RUN#run${i}",`);
      const [pruned] = await reopened.prune(at(4), at(100));
      expect(pruned?.runIds).toEqual(['run1', 'run2']);
      expect((await reopened.listRuns(10)).map((r) => r.runId)).toEqual(['run4', 'run3']);
      expect(await reopened.getRun('run1')).toBeUndefined();
      expect(await reopened.findApproval('apv_0000000000000001')).toBeUndefined();
      expect(await reopened.getEffect('refunds:issue_refund:rr_1')).toMatchObject({ runId: 'run1' });
      expect((await reopened.listConversation('run3')).turns).toHaveLength(1);
      expect(await reopened.verifyPrunes()).toEqual([]);
    } finally {
      reopened.close();
    }
  });
});
