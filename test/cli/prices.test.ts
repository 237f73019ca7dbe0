import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { savepoint, smallDay } from '../support/cli-process.js';

const dir = mkdtempSync(join(tmpdir(), 'savepoint-prices-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

/**
 * A run of the refund reconciler, on a day of six refund requests (smallDay), not the sample day's 25:
 * the same turns of each kind, each priced by the same table, for less CPU.
 */
const run = ['run', '--agent', 'refund-reconciler', '--memory', '--json', '--approve', 'approve', '--world-data', file('day.json', JSON.stringify(smallDay))];
/** The simulator's built-in price (Sonnet-class: 3 / 15 / 3.75 / 0.3), ten times over. */
const TENFOLD = { 'sim:savepoint-sim-1': { inputPerMTok: 30, outputPerMTok: 150, cacheWritePerMTok: 37.5, cacheReadPerMTok: 3 } };

describe('savepoint run --prices', () => {
  it('prices the run with the file over the built-in table: the same tokens cost ten times as much', async () => {
    const [plain, priced] = await Promise.all([savepoint(run), savepoint([...run, '--prices', file('tenfold.json', JSON.stringify(TENFOLD))])]);
    expect(plain.code, plain.stderr).toBe(0);
    expect(priced.code, priced.stderr).toBe(0);
    const [before, after] = [plain, priced].map((outcome) => JSON.parse(outcome.stdout) as { status: string; dollars: number; tokens: unknown });
    expect(after!.status).toBe('succeeded');
    // The simulated model is deterministic: the same turns, the same usage.
    expect(after!.tokens).toEqual(before!.tokens);
    expect(after!.dollars / before!.dollars).toBeCloseTo(10, 3);
  });

  it.each([
    ['a price with a bad and a missing field', 'bad.json', JSON.stringify({ 'sim:savepoint-sim-1': { inputPerMTok: 30, outputPerMTok: -1, cacheWritePerMTok: 37.5 } }), /^savepoint: --prices \S+bad\.json: invalid price overrides: sim:savepoint-sim-1\.outputPerMTok: .*; sim:savepoint-sim-1\.cacheReadPerMTok: /],
    ['a model spec that is not one', 'spec.json', JSON.stringify({ 'gpt-5': TENFOLD['sim:savepoint-sim-1'] }), /^savepoint: --prices \S+spec\.json: .*gpt-5/],
    ['an absurd price (1e308 dollars per million tokens)', 'huge.json', JSON.stringify({ 'sim:savepoint-sim-1': { ...TENFOLD['sim:savepoint-sim-1'], outputPerMTok: 1e308 } }), /^savepoint: --prices \S+huge\.json: invalid price overrides: sim:savepoint-sim-1\.outputPerMTok: at most 10000 dollars per million tokens/],
    ['text that is not JSON', 'text.json', '{ "sim:savepoint-sim-1": ', /^savepoint: --prices \S+text\.json: not valid JSON/],
  ])('refuses %s once, naming the file and the field, with exit code 2', async (_case, name, text, message) => {
    const refused = await savepoint([...run, '--prices', file(name, text)]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toMatch(message);
    // Said once, before anything started.
    expect(refused.stderr.match(/--prices/g)).toHaveLength(1);
    expect(refused.stderr).not.toMatch(/starting the local stack/);
    expect(refused.stdout).toBe('');
  });

  it('refuses a file it cannot read, naming it', async () => {
    const refused = await savepoint([...run, '--prices', join(dir, 'missing.json')]);
    expect(refused.code).toBe(2);
    expect(refused.stderr.trim()).toBe(`savepoint: --prices ${join(dir, 'missing.json')}: cannot read it: no such file or directory`);
  });
});
