import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { hmacSealer, verifyRun, type LedgerSealer } from '../../lambdas/ledger/seal.js';
import { chained, LogHead, splitChained } from '../../lambdas/ledger/sealed-log.js';
import { at, turn } from './fixtures.js';

/**
 * The embedded log's formats: a ledger written by 0.15.1 (fixtures/ledger-0.15.1, spec/prune.ts
 * `fourRuns`: runs a and b finished, c running, d failed), whose lines carry seals over the
 * canonical JSON of their attributes, is read, verified and written to by this version, whose
 * lines carry seals over their own text (sealed-log.ts `textSeal`); either kind of line altered is
 * named. The damage here keeps the chain whole (re-made with the key, as only a holder of the key
 * could): what finds it is the seal alone.
 */
const FIXTURE = join(import.meta.dirname, 'fixtures', 'ledger-0.15.1');
const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the 0.15.1 ledger to open (an open writes beside the log: its index, its lock). */
function oldLedger(): string {
  const dir = mkdtempSync(join(tmpdir(), 'savepoint-format-'));
  dirs.push(dir);
  cpSync(FIXTURE, dir, { recursive: true });
  return dir;
}

const sealerOf = (dir: string): LedgerSealer => hmacSealer(readFileSync(join(dir, 'keys', 'ledger-seal.key')));
const logOf = (dir: string) => join(dir, 'ledger.jsonl');
const linesOf = (dir: string) => readFileSync(logOf(dir), 'utf8').split('\n').slice(0, -1);
const sealOf = (text: string) => (JSON.parse(text) as { seal: string }).seal;
/** What verifyRun finds in each run (fourRuns claims a call of run a in a turn it never records: run a's one problem, in every version). */
const problemsOf = async (ledger: EmbeddedLedger) => Promise.all(['a', 'b', 'c', 'd'].map(async (runId) => (await verifyRun(ledger, runId)).problems));
const AS_WRITTEN = [['ledger integrity: run a, record TURN#0003 fails verification: the record is missing (call 1 of that turn exists)'], [], [], []];

/** Rewrites the log as `edit` changes its lines' bodies (each line without its chain), the chain and the head made again with the key. */
function rewriteKeepingChain(dir: string, edit: (bodies: string[]) => string[]): void {
  const sealer = sealerOf(dir);
  let tip = '';
  const out = edit(linesOf(dir).map((text) => splitChained(text)!.body)).map((body) => {
    tip = sealer.chain(tip, body);
    return chained(body, tip);
  });
  writeFileSync(logOf(dir), `${out.join('\n')}\n`);
  rmSync(join(dir, 'ledger.index'), { force: true });
  const head = LogHead.open(join(dir, 'ledger.head'));
  head.write(out.length, tip, sealer);
  head.close();
}

/** The index of the last of `bodies` that holds `pk`/`sk`. */
function lastLineOf(bodies: readonly string[], pk: string, sk: string): number {
  const start = `{"pk":${JSON.stringify(pk)},"sk":${JSON.stringify(sk)},`;
  for (let at = bodies.length - 1; at >= 0; at--) if (bodies[at]!.startsWith(start)) return at;
  throw new Error(`no line of ${pk}/${sk}`);
}

describe("the embedded log's formats", () => {
  it('reads and verifies a ledger written by 0.15.1, takes new writes on it, and verifies the two kinds of lines together', async () => {
    const dir = oldLedger();
    expect(linesOf(dir).every((text) => !sealOf(text).startsWith('t.'))).toBe(true);
    const read = EmbeddedLedger.openToRead({ dir, verify: true });
    expect((await read.listRuns()).map((run) => `${run.runId} ${run.status}`).sort()).toEqual(['a succeeded', 'b killed', 'c running', 'd failed']);
    expect((await read.listConversation('c')).turns.map((record) => record.content)).toEqual([[{ type: 'text', text: 'first of c' }], [{ type: 'text', text: 'second of c' }]]);
    expect(await problemsOf(read)).toEqual(AS_WRITTEN);
    read.close();

    const ledger = EmbeddedLedger.open({ dir });
    expect((await ledger.getBlob('a', 'd1'))).toEqual(['blob of a']);
    await ledger.recordTurn(turn(3, 'third of c', 'c'));
    await ledger.finishRun('c', { status: 'succeeded', stopReason: 'done' }, at(40));
    ledger.close();

    const written = linesOf(dir).slice(21);
    expect(written.length).toBeGreaterThan(0);
    expect(written.every((text) => sealOf(text).startsWith('t.'))).toBe(true);
    const again = EmbeddedLedger.openToRead({ dir, verify: true });
    expect(await problemsOf(again)).toEqual(AS_WRITTEN);
    expect((await again.listConversation('c')).turns).toHaveLength(3);
    expect((await again.getRun('c'))?.status).toBe('succeeded');
    again.close();
  });

  it('compacts a log of both kinds of lines into one that verifies, the records as they were', async () => {
    const dir = oldLedger();
    const ledger = EmbeddedLedger.open({ dir });
    await ledger.recordTurn(turn(3, 'third of c', 'c'));
    const before = await ledger.listConversation('c');
    ledger.close();
    // Every open compacts it (minBytes 0, and the log is more than 1.01 times its live state).
    EmbeddedLedger.open({ dir, compaction: { ratio: 1.01, minBytes: 0 }, onNote: () => undefined }).close();
    const read = EmbeddedLedger.openToRead({ dir, verify: true });
    expect(await read.listConversation('c')).toEqual(before);
    expect(await problemsOf(read)).toEqual(AS_WRITTEN);
    read.close();
  });

  it.each([
    ['0.15.1', false],
    ['this version', true],
  ])('names a record altered in a line written by %s, its chain made whole again', async (_version, textSealed) => {
    const dir = oldLedger();
    if (textSealed) {
      const ledger = EmbeddedLedger.open({ dir });
      await ledger.recordTurn(turn(3, 'third of c', 'c'));
      ledger.close();
    }
    const sk = textSealed ? 'TURN#0003' : 'TURN#0002';
    rewriteKeepingChain(dir, (bodies) => {
      const at = lastLineOf(bodies, 'RUN#c', sk);
      expect(sealOf(`${bodies[at]}`).startsWith('t.')).toBe(textSealed);
      bodies[at] = bodies[at]!.replace('of c', 'of C');
      return bodies;
    });
    expect(() => EmbeddedLedger.openToRead({ dir, verify: true })).toThrow(new RegExp(`run c, record ${sk} fails verification: its seal does not match its content and key`));
    expect(() => EmbeddedLedger.open({ dir })).toThrow(new RegExp(`run c, record ${sk} fails verification: its seal does not match`));
  });

  it('names a text-sealed line moved to another key, and one given the seal of another line', async () => {
    const dir = oldLedger();
    const ledger = EmbeddedLedger.open({ dir });
    await ledger.recordTurn(turn(3, 'third of c', 'c'));
    await ledger.recordTurn(turn(4, 'third of c', 'c'));
    ledger.close();
    const moved = oldLedger();
    cpSync(dir, moved, { recursive: true });
    rewriteKeepingChain(moved, (bodies) => {
      const third = lastLineOf(bodies, 'RUN#c', 'TURN#0003');
      bodies[third] = bodies[third]!.replace('"sk":"TURN#0003"', '"sk":"TURN#0005"');
      return bodies;
    });
    expect(() => EmbeddedLedger.openToRead({ dir: moved, verify: true })).toThrow(/run c, record TURN#0005 fails verification: its seal does not match/);
    rewriteKeepingChain(dir, (bodies) => {
      const [third, fourth] = [lastLineOf(bodies, 'RUN#c', 'TURN#0003'), lastLineOf(bodies, 'RUN#c', 'TURN#0004')];
      bodies[fourth] = bodies[fourth]!.replace(/"seal":"[^"]*"/, `"seal":${JSON.stringify(sealOf(`${bodies[third]}`))}`);
      return bodies;
    });
    expect(() => EmbeddedLedger.openToRead({ dir, verify: true })).toThrow(/run c, record TURN#0004 fails verification: its seal does not match/);
  });
});
