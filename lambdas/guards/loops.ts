import type { LoopOptions } from '../define.js';
import type { TurnRecord } from '../records/ledger-records.js';
import { toolUses } from '../conversation/turns.js';
import { clip } from '../shared/text.js';

/**
 * Loop detection: a model stuck retrying the same call (the $412 retry spiral), cycling through a
 * few calls, or answering the same text again and again without calling a tool, is stopped (or
 * paused for a person) by the harness before the budget runs out. Each tool call is fingerprinted
 * by its name and normalized arguments, a text-only turn by its normalized text; the last
 * `window` turns are examined for repeats, the last few rounds of turns for cycles. The model is
 * warned in its next turn before any trip.
 */
export const LOOP = { window: 5, warnAt: 3, repeats: 5, cycleLength: 8, onLoop: 'stop' } as const;

/** An agent's loop settings with the defaults filled in. */
export type LoopSettings = Required<LoopOptions>;

export function loopSettings(options: LoopOptions | undefined): LoopSettings {
  return { ...LOOP, ...options };
}

/** A cycle warns after two rounds and trips after three. */
const CYCLE_ROUNDS = { warn: 2, trip: 3 } as const;

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
 * Examines the last turns: the same call (or the same text without a tool call) `warnAt` times in
 * the window warns the model (a note in its next turn), `repeats` times trips; a cycle of whole
 * turns of up to `cycleLength` (A→B→…→A→B→…) warns after two rounds and trips after three.
 * Turns up to `from` are not examined: a person let the run go on after a trip there.
 */
export function loopVerdict(all: TurnRecord[], settings: LoopSettings = LOOP, from = 0): LoopVerdict | undefined {
  const turns = modelTurns(all, from, Math.max(settings.window, (CYCLE_ROUNDS.trip + 1) * settings.cycleLength));
  const recent = turns.slice(-settings.window);
  const counts = new Map<string, number>();
  for (const turn of recent) {
    for (const fingerprint of fingerprintsOf(turn).calls) counts.set(fingerprint, (counts.get(fingerprint) ?? 0) + 1);
  }
  // The most repeated, the first seen of those tied (asked twice a turn: one pass, no sort).
  let worst = '';
  let count = 0;
  for (const [fingerprint, times] of counts) {
    if (times <= count) continue;
    worst = fingerprint;
    count = times;
  }
  if (count >= settings.repeats) return { action: 'stop', reason: `loop detected: ${clip(worst, 160, 157)} repeated ${count} times in the last ${recent.length} turns` };

  const cycle = turnCycle(turns, settings.cycleLength);
  if (cycle && cycle.rounds >= CYCLE_ROUNDS.trip) return { action: 'stop', reason: `loop detected: a cycle of ${cycle.period} turns repeated ${cycle.rounds} times (${clip(cycle.calls, 160, 157)})` };
  if (count >= settings.warnAt) {
    return { action: 'warn', reason: worst.startsWith(TEXT) ? `you answered ${clip(worst, 160, 157)} ${count} times in the last ${recent.length} turns` : `you called ${clip(worst, 160, 157)} ${count} times in the last ${recent.length} turns with the same arguments` };
  }
  if (cycle) return { action: 'warn', reason: `your last turns repeat in a cycle of ${cycle.period} (${clip(cycle.calls, 160, 157)})` };
  return undefined;
}

/**
 * The newest `count` turns after turn `from` that the model made: a compaction (its summary, a
 * harness step) is no turn of the model's, neither a repeated text nor a round of a cycle — a run
 * polling one call, compacted every few turns, was stopped as a cycle of its polls and compactions.
 * Walked from the end, as the detector reads no further back than that.
 */
function modelTurns(all: readonly TurnRecord[], from: number, count: number): TurnRecord[] {
  const turns: TurnRecord[] = [];
  for (let i = all.length - 1; i >= 0 && turns.length < count; i--) {
    const turn = all[i]!;
    if (turn.turn > from && turn.compaction === undefined) turns.push(turn);
  }
  return turns.reverse();
}

/** The longest run of whole-turn repetitions with a period from 2 to `longest` at the end of the conversation. */
function turnCycle(all: TurnRecord[], longest: number): { period: number; rounds: number; calls: string } | undefined {
  // Three rounds trip, so no verdict needs more than a round past that of the longest period:
  // fingerprinting the whole conversation every turn would make a run quadratic.
  const turns = all.slice(-(CYCLE_ROUNDS.trip + 1) * longest);
  const signatures = turns.map((turn) => fingerprintsOf(turn).signature);
  const n = signatures.length;
  for (let period = 2; period <= longest; period++) {
    // Compared in place (asked twice a turn, for every period): rounds of `period` signatures
    // that repeat the last round, from the end back.
    let rounds = 1;
    while (n >= period * (rounds + 1) && sameRound(signatures, n - period * (rounds + 1), n - period, period)) rounds += 1;
    if (rounds >= CYCLE_ROUNDS.warn && distinctIn(signatures, n - period, n)) {
      const calls = turns
        .slice(-period)
        .map((turn) => toolUses(turn).map((use) => use.name).join('+') || 'no tool')
        .join(' → ');
      return { period, rounds, calls };
    }
  }
  return undefined;
}

/** Whether the `period` signatures from `a` are those from `b`, in order. */
function sameRound(signatures: readonly string[], a: number, b: number, period: number): boolean {
  for (let i = 0; i < period; i++) if (signatures[a + i] !== signatures[b + i]) return false;
  return true;
}

/** Whether the signatures from `from` to `to` are not all one (a cycle, not one turn repeated). */
function distinctIn(signatures: readonly string[], from: number, to: number): boolean {
  for (let i = from + 1; i < to; i++) if (signatures[i] !== signatures[from]) return true;
  return false;
}

/** How a text-only turn's fingerprint starts: the same answer again, with no tool call, is no progress. */
const TEXT = 'the same text without a tool call: ';

/**
 * A turn's call fingerprints and whole-turn signature, computed once per record: a recorded turn
 * never changes, and the steps keep the records they read (lambdas/conversation/turns.ts), so the
 * detector, asked three times a turn, does not normalize and hash the same calls again.
 */
const fingerprints = new WeakMap<TurnRecord, { calls: string[]; signature: string }>();
function fingerprintsOf(turn: TurnRecord): { calls: string[]; signature: string } {
  let known = fingerprints.get(turn);
  if (known === undefined) {
    const uses = toolUses(turn);
    const text = turn.content.map((block) => (block.type === 'text' ? block.text : '')).join(' ');
    const calls = uses.length > 0 ? uses.map((use) => callFingerprint(use.name, use.input)) : [`${TEXT}${JSON.stringify(normalize(text))}`];
    // The signature is compared, never stored or shown: the joined fingerprints themselves, exact
    // (no hash to make twice a turn, in two steps, for every new turn).
    known = { calls, signature: calls.join('\n') };
    fingerprints.set(turn, known);
  }
  return known;
}

