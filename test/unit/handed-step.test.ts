import { describe, expect, it } from 'vitest';
import { HANDED_FRESH_MS, HANDED_STEP_MAX_BYTES, handedStates, handedTo, handOn } from '../../lambdas/steps/handed-step.js';
import { handedContent } from '../../lambdas/ledger/handed-versions.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { runRecord } from '../support/records.js';
import { turn } from '../contract/fixtures.js';

/**
 * What CallModel hands its turn's calls (lambdas/steps/handed-step.ts) rides on the execution's
 * payload, each Map iteration a copy: within Step Functions' 256 KiB a state only while it is small,
 * so a run or turn past HANDED_STEP_MAX_BYTES hands nothing and its calls read.
 */
const basis = { run: 'v1', kill: null, mac: 'seal' };
const recorded = turn(2, 'Looking at the refunds.', 'r1');
/** What a turn's write tells (handed-versions.ts `seenWith`): the basis with the sealed text of the run and the turn. */
const seen = (run: RunRecord) => ({ run, basis: { ...basis, content: handedContent(run, undefined, recorded) } });

describe('the state a turn hands its calls', () => {
  it('is handed while it is small, and taken back by the call of that run and turn while fresh', () => {
    const run = runRecord({ runId: 'r1', input: { date: '2026-11-28' } });
    const handed = handOn(seen(run), { state: undefined });
    // The versions and seal, and the sealed text as it was told (not serialized again).
    expect(handed).toEqual({ basis, state: handedContent(run, undefined, recorded) });
    const at = new Date(Date.parse(recorded.recordedAt!) + 1_000);
    expect(handedTo({ handed }, 'r1', 2, at)).toEqual({ ...handed, run, turn: recorded });
    expect(handedTo({ handed }, 'r2', 2, at)).toBeUndefined();
    expect(handedTo({ handed }, 'r1', 3, at)).toBeUndefined();
    expect(handedTo({ handed }, 'r1', 2, new Date(Date.parse(recorded.recordedAt!) + HANDED_FRESH_MS + 1))).toBeUndefined();
    // A text that is not the records' JSON is taken as nothing handed (the call reads).
    expect(handedTo({ handed: { ...handed, state: '{"run":' } }, 'r1', 2, at)).toBeUndefined();
    expect(handedTo({ handed: { ...handed, state: JSON.stringify({ run, turn: { ...recorded, kind: 'call' } }) } }, 'r1', 2, at)).toBeUndefined();
  });

  it('is parsed once for the calls of a turn (the memo of an instance): the same frozen records, each call still checked for its run, turn and age', () => {
    const run = runRecord({ runId: 'r1', input: { date: '2026-11-28' } });
    const handed = handOn(seen(run), { state: undefined })!;
    const at = new Date(Date.parse(recorded.recordedAt!) + 1_000);
    const states = handedStates();
    const first = handedTo({ handed }, 'r1', 2, at, states)!;
    const second = handedTo({ handed: { ...handed } }, 'r1', 2, at, states)!;
    expect(second).toEqual({ ...handed, run, turn: recorded });
    expect(second.run).toBe(first.run);
    expect(second.turn).toBe(first.turn);
    expect(states.size).toBe(1);
    // No call may change what the others of its turn read.
    expect(Object.isFrozen(first.run) && Object.isFrozen(first.turn.content[0])).toBe(true);
    expect(() => ((first.run as { steps: number }).steps = 99)).toThrow(TypeError);
    // The memo answers the text, never the checks of the call asking.
    expect(handedTo({ handed }, 'r2', 2, at, states)).toBeUndefined();
    expect(handedTo({ handed }, 'r1', 3, at, states)).toBeUndefined();
    expect(handedTo({ handed }, 'r1', 2, new Date(Date.parse(recorded.recordedAt!) + HANDED_FRESH_MS + 1), states)).toBeUndefined();
    // A text not in the shape is remembered as such, and taken as nothing handed again.
    const broken = { ...handed, state: JSON.stringify({ run, turn: { ...recorded, kind: 'call' } }) };
    expect(handedTo({ handed: broken }, 'r1', 2, at, states)).toBeUndefined();
    expect(handedTo({ handed: broken }, 'r1', 2, at, states)).toBeUndefined();
    expect(states.size).toBe(2);
  });

  it('is not handed past HANDED_STEP_MAX_BYTES (a large run input): its calls read', () => {
    const run = runRecord({ runId: 'r1', input: { notes: 'x'.repeat(HANDED_STEP_MAX_BYTES) } });
    expect(handOn(seen(run), { state: undefined })).toBeUndefined();
    // Weighed as the payload carries it, escaped: a text of characters JSON escapes weighs six bytes each.
    const escaped = (text: string) => ({ run: runRecord({ runId: 'r1' }), basis: { ...basis, content: text } });
    const unit = Math.floor(HANDED_STEP_MAX_BYTES / 6) - 64;
    expect(handOn(escaped('\u0001'.repeat(unit)), { state: undefined })).toBeDefined();
    expect(handOn(escaped('\u0001'.repeat(unit * 2)), { state: undefined })).toBeUndefined();
    expect(handOn(escaped('"'.repeat(HANDED_STEP_MAX_BYTES / 2 + 1)), { state: undefined })).toBeUndefined();
    expect(handOn(escaped('x'.repeat(HANDED_STEP_MAX_BYTES - 200)), { state: undefined })).toBeDefined();
    // Nor when the engine named no versions.
    expect(handOn({ run: runRecord({ runId: 'r1' }) }, { state: undefined })).toBeUndefined();
  });
});
