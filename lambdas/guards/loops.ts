import { createHash } from 'node:crypto';
import type { TurnRecord } from '../ledger/records.js';
import { toolUses } from '../conversation/turns.js';

/**
 * Loop detection: a model stuck retrying the same call (the $412 retry spiral) is stopped by the
 * harness before the budget runs out. Each tool call is fingerprinted by its name and normalized
 * arguments; the last WINDOW turns are examined.
 */
export const LOOP = { window: 5, warnAt: 3, stopAt: 5 } as const;

/** Key order and incidental whitespace do not make two calls different. */
function normalize(value: unknown): unknown {
  if (typeof value === 'string') return value.trim().replace(/\s+/g, ' ');
  if (Array.isArray(value)) return value.map(normalize);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, normalize((value as Record<string, unknown>)[key])]),
    );
  }
  return value;
}

export function callFingerprint(name: string, args: unknown): string {
  return `${name} ${JSON.stringify(normalize(args))}`;
}

export interface LoopVerdict {
  action: 'warn' | 'stop';
  reason: string;
}

/**
 * Examines the last turns: the same call `warnAt` times in the window warns the model (a note in
 * its next turn), `stopAt` times stops the run; a short cycle of whole turns (A→B→A→B) warns after
 * two rounds and stops after three.
 */
export function loopVerdict(turns: TurnRecord[]): LoopVerdict | undefined {
  const recent = turns.slice(-LOOP.window);
  const counts = new Map<string, number>();
  for (const turn of recent) {
    for (const fingerprint of fingerprintsOf(turn).calls) counts.set(fingerprint, (counts.get(fingerprint) ?? 0) + 1);
  }
  const [worst, count] = [...counts].sort((a, b) => b[1] - a[1])[0] ?? ['', 0];
  if (count >= LOOP.stopAt) return { action: 'stop', reason: `loop detected: ${clip(worst)} repeated ${count} times in the last ${recent.length} turns` };

  const cycle = turnCycle(turns);
  if (cycle && cycle.rounds >= 3) return { action: 'stop', reason: `loop detected: a cycle of ${cycle.period} turns repeated ${cycle.rounds} times (${clip(cycle.calls)})` };
  if (count >= LOOP.warnAt) return { action: 'warn', reason: `you called ${clip(worst)} ${count} times in the last ${recent.length} turns with the same arguments` };
  if (cycle) return { action: 'warn', reason: `your last turns repeat in a cycle of ${cycle.period} (${clip(cycle.calls)})` };
  return undefined;
}

const CYCLE_TURNS = 3 * 4;

/** The longest run of whole-turn repetitions with period 2 or 3 at the end of the conversation. */
function turnCycle(all: TurnRecord[]): { period: number; rounds: number; calls: string } | undefined {
  // Three rounds stop the run, so no verdict needs more than a round past that of the longest
  // period: fingerprinting the whole conversation every turn would make a run quadratic.
  const turns = all.slice(-CYCLE_TURNS);
  const signatures = turns.map((turn) => fingerprintsOf(turn).signature);
  for (const period of [2, 3]) {
    let rounds = 1;
    while (signatures.length >= period * (rounds + 1)) {
      const end = signatures.length - period * rounds;
      const previous = signatures.slice(end - period, end);
      const last = signatures.slice(signatures.length - period);
      if (previous.join() !== last.join()) break;
      rounds += 1;
    }
    const distinct = new Set(signatures.slice(-period)).size > 1;
    if (rounds >= 2 && distinct) {
      const calls = turns
        .slice(-period)
        .map((turn) => toolUses(turn).map((use) => use.name).join('+') || 'no tool')
        .join(' → ');
      return { period, rounds, calls };
    }
  }
  return undefined;
}

/**
 * A turn's call fingerprints and whole-turn signature, computed once per record: a recorded turn
 * never changes, and the steps keep the records they read (lambdas/conversation/turns.ts), so the
 * detector, asked three times a turn, does not normalize and hash the same calls again.
 */
const fingerprints = new WeakMap<TurnRecord, { calls: string[]; signature: string }>();
function fingerprintsOf(turn: TurnRecord): { calls: string[]; signature: string } {
  let known = fingerprints.get(turn);
  if (known === undefined) {
    const calls = toolUses(turn).map((use) => callFingerprint(use.name, use.input));
    known = { calls, signature: hash(calls.join('\n')) };
    fingerprints.set(turn, known);
  }
  return known;
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16);
}

function clip(text: string): string {
  return text.length > 160 ? `${text.slice(0, 157)}…` : text;
}

