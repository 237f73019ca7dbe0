import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from './import-graph.js';
import { functionParameters } from './parameters.js';

/**
 * No function of lambdas/ or local/ takes more than five positional parameters: past that a call
 * is a row of values read by position (`completeCall(runId, turn, call, outcome, now, effect,
 * count)`), and a wrapper that forwards it copies the row. The cure is one object named by its
 * fields. The few kept are listed with why.
 */
const ROOT = new URL('../..', import.meta.url).pathname;
const MAX_POSITIONAL = 5;

/** `file: function` kept over the limit, and why. */
const KEPT: Readonly<Record<string, string>> = {
  'lambdas/ledger/append-log.ts: constructor':
    'a private constructor of parameter properties (the open file: path, descriptor, size, lines, options, a broken tail), called only by AppendLog.open',
  'lambdas/ledger/protocol.ts: completeCallEffect':
    'a protocol rule: the records it reads, in the order the storage hands them over (updatePair), then what it writes and when, the one shape of every rule in protocol.ts',
  'lambdas/ledger/protocol.ts: renewCallEffect': 'a protocol rule, as completeCallEffect',
  'lambdas/ledger/protocol.ts: completeCallCounted': 'a protocol rule (updateItems hands over the call, its effect and the run item), as completeCallEffect',
};

const files = sourceFiles(ROOT, ['lambdas', 'local']);

/** Each `file: function (n positional parameters)` over the limit. */
function overLimit(): string[] {
  return files.flatMap((file) =>
    functionParameters(readFileSync(join(ROOT, file), 'utf8'))
      .filter((fn) => fn.parameters > MAX_POSITIONAL)
      .map((fn) => `${file}: ${fn.name} (${fn.parameters} positional parameters)`),
  );
}

describe('the functions of lambdas/ and local/', () => {
  const found = overLimit();

  it(`take at most ${MAX_POSITIONAL} positional parameters, but for those kept with a reason`, () => {
    expect(files.length).toBeGreaterThan(150);
    expect(found.filter((entry) => !(entry.replace(/ \(\d+ positional parameters\)$/, '') in KEPT))).toEqual([]);
  });

  it('keep no exception that is no longer needed', () => {
    const still = new Set(found.map((entry) => entry.replace(/ \(\d+ positional parameters\)$/, '')));
    expect(Object.keys(KEPT).filter((kept) => !still.has(kept))).toEqual([]);
  });
});

describe('functionParameters', () => {
  const counts = (source: string) => functionParameters(source).map(({ name, parameters }) => `${name} ${parameters}`);

  it('counts declarations, methods, constructors and arrows, by name', () => {
    const source = [
      'export function complete(runId: string, turn: number, call: number, outcome: Outcome, now: Date, effect?: Effect, count?: StepCount): Promise<void> { return go(a, b, c, d, e, f); }',
      'class Ledger { constructor(private readonly path: string, fd: number) {} async renew(a: number, b = 2, ...rest: Date[]): Promise<boolean> { return true; } }',
      'const settle = async (x: number, y: { a: number; b: string }, z: Map<string, [number, number]>) => x;',
      'const table = { decide: (a: A, b: B) => a, shape(c: C) { return c; } };',
      'items.map((item, index) => item);',
    ].join('\n');
    expect(counts(source)).toEqual(['complete 7', 'constructor 2', 'renew 3', 'settle 3', 'decide 2', 'shape 1', '(anonymous) 2']);
  });

  it('counts a destructured object as one parameter, and a type as no function', () => {
    const source = [
      'interface Ledger { completeCall(runId: string, turn: number, call: number, outcome: O, now: Date, effect?: E, count?: C): Promise<R>; }',
      'type Fn = (a: number, b: number, c: number, d: number, e: number, f: number) => void;',
      'export function completeCall({ runId, turn, call, outcome, now, effect, count }: CallCompletion) { return runId; }',
    ].join('\n');
    expect(counts(source)).toEqual(['completeCall 1']);
  });

  it('is not misled by brackets and commas in strings, templates, regular expressions and comments', () => {
    const source = [
      "function quoted(a: string, b = '(x, y, z) => {', c = `${f(1, 2)}, )`) { return /[(,]\\)/.test(a) ? 1 : 2 / 3; }",
      '// function commented(a, b, c, d, e, f, g) {}',
      'function after(a: number) { return a; }',
    ].join('\n');
    expect(counts(source)).toEqual(['quoted 3', 'after 1']);
  });

  it('does not take control flow or a call for a function', () => {
    expect(counts('if (a, b) { x(); } for (let i = 0; i < 3; i++) { y(i, 2); } while (go(1, 2, 3, 4, 5, 6)) { break; }')).toEqual([]);
  });
});
