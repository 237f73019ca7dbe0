import { describe, expect, it } from 'vitest';
import * as protocol from '../../lambdas/ledger/protocol.js';
import { COUNTED_STEPS_KEPT, type Stored } from '../../lambdas/ledger/protocol.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { run } from '../contract/fixtures.js';

/**
 * Issue 20 item 7: the run item grew by one counted-step key a step (`countedSteps`), so every
 * write of it grew with the run (quadratic write units over a run) and a run failed every write
 * past ~40,000 steps (DynamoDB's 400 KB item), RecordFailure included.
 */
const DYNAMODB_ITEM_LIMIT = 400 * 1024;

/** The run item after `steps` steps counted (4 a turn: the turn and 3 tool calls), and its largest size on the way. */
function countSteps(steps: number): { item: Stored<RunRecord>; largest: number } {
  let item: Stored<RunRecord> = { record: run('r1'), meta: {} };
  let largest = 0;
  for (let step = 0; step < steps; step++) {
    const turn = Math.floor(step / 4) + 1;
    const key = step % 4 === 0 ? `turn:${turn}` : `call:${turn}:${step % 4}`;
    const next = protocol.countStep(item, key, { steps: 1, ...(step % 4 === 0 ? { modelTurns: 1 } : { toolCalls: 1 }) });
    if (!('write' in next)) throw new Error(`step ${key} was not counted`);
    item = next.write as unknown as Stored<RunRecord>;
    largest = Math.max(largest, Buffer.byteLength(JSON.stringify(item)));
  }
  return { item, largest };
}

describe('the run item, however many steps it counts', () => {
  it('stays under a fixed size after 50,000 counted steps: as large as after 100', () => {
    const short = countSteps(100);
    const long = countSteps(50_000);
    expect(long.item.record).toMatchObject({ steps: 50_000, modelTurns: 12_500, toolCalls: 37_500 });
    expect(long.item.meta.countedSteps).toHaveLength(COUNTED_STEPS_KEPT);
    // Keys grow by a digit or two (turn:99 → turn:12500): a few hundred bytes, never one key a step.
    expect(long.largest).toBeLessThan(short.largest + 2 * COUNTED_STEPS_KEPT * 3);
    expect(long.largest).toBeLessThan(4 * 1024);
    expect(long.largest).toBeLessThan(DYNAMODB_ITEM_LIMIT / 100);
  });

  it('keeps a child\'s open reservation however many steps come after it, and stays bounded as 2,000 children open and settle', () => {
    let item: Stored<RunRecord> = { record: run('r1'), meta: {} };
    const count = (key: string, deltas: Partial<RunRecord>) => {
      const next = protocol.countStep(item, key, deltas);
      if ('write' in next) item = next.write as unknown as Stored<RunRecord>;
      return 'write' in next;
    };
    expect(count('child:1:1:reserve', { costMicros: 1_000, childRunsOpen: 1 })).toBe(true);
    for (let turn = 2; turn <= 2_000; turn++) {
      expect(count(`turn:${turn}`, { steps: 1 })).toBe(true);
      expect(count(`child:${turn}:1:reserve`, { costMicros: 1_000, childRunsOpen: 1 })).toBe(true);
      expect(count(`child:${turn}:1:settle`, { costMicros: -900, childRunsOpen: -1 })).toBe(true);
    }
    // The window: the newest keys, and the first child's reservation, still open.
    expect(item.meta.countedSteps).toHaveLength(COUNTED_STEPS_KEPT + 1);
    expect(item.meta.countedSteps![0]).toBe('child:1:1:reserve');
    expect(count('child:1:1:reserve', { costMicros: 1_000, childRunsOpen: 1 })).toBe(false);
    expect(count('child:1:1:settle', { costMicros: -900, childRunsOpen: -1 })).toBe(true);
    expect(count('child:1:1:settle', { costMicros: -900, childRunsOpen: -1 })).toBe(false);
    expect(item.record).toMatchObject({ costMicros: 2_000 * 100, childRunsOpen: 0 });
    expect(item.meta.countedSteps).toHaveLength(COUNTED_STEPS_KEPT);
  });

  it('closes a reservation settled before the window kept open ones (a run counted by 0.21.1): its key goes, so a late settle counts nothing', () => {
    const item: Stored<RunRecord> = { record: run('r1', { costMicros: 100, childRunsOpen: 0 }), meta: { countedSteps: ['child:1:1:reserve', 'turn:1', 'child:1:1:settle'] } };
    const next = protocol.countStep(item, 'turn:2', { steps: 1 });
    expect('write' in next && next.write.meta.countedSteps).toEqual(['turn:1', 'child:1:1:settle', 'turn:2']);
  });

  it('counts a retried step once, at step 50,000 as at step 1', () => {
    const { item } = countSteps(50_000);
    const retried = protocol.countStep(item, 'call:12500:3', { steps: 1, toolCalls: 1 });
    expect(retried).toEqual({ keep: false });
  });

  it('counts 50,000 steps on the embedded ledger, a retry of each once, and records the run failing at the end', async () => {
    const ledger = EmbeddedLedger.open();
    try {
      await ledger.createRun(run('r1'));
      for (let step = 1; step <= 50_000; step++) {
        expect(await ledger.countStep('r1', `call:${step}:1`, { steps: 1, toolCalls: 1 })).toBe(true);
        if (step % 1_000 === 0) expect(await ledger.countStep('r1', `call:${step}:1`, { steps: 1, toolCalls: 1 })).toBe(false);
      }
      // RecordFailure's write of the same item, at step 50,000.
      const failed = await ledger.finishRun('r1', { status: 'failed', error: { error: 'Agent.Transient', cause: 'gave up' } }, new Date('2026-11-29T03:00:00Z'));
      expect(failed).toMatchObject({ status: 'failed', steps: 50_000, toolCalls: 50_000 });
    } finally {
      ledger.close();
    }
  }, 60_000);
});
