import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { LONG_REPLAY_STEPS, replayHeapFlags } from '../../cli/replay-heap.js';

describe("a replay's young generation (cli/replay-heap.ts)", () => {
  it('stays at its first size for a run of up to LONG_REPLAY_STEPS steps, and grows as usual for a longer one', () => {
    expect(LONG_REPLAY_STEPS).toBe(500);
    for (const steps of [0, 3, 102, 401, LONG_REPLAY_STEPS]) expect(replayHeapFlags(steps)).toEqual([]);
    for (const steps of [LONG_REPLAY_STEPS + 1, 1_001, 2_001]) expect(replayHeapFlags(steps)).toEqual(['--semi-space-growth-factor=2']);
  });

  it("sets back V8's own default growth factor, as this Node's V8 states it", () => {
    const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    const setBack = replayHeapFlags(LONG_REPLAY_STEPS + 1)[0]!;
    expect(options).toContain(`default: ${setBack}\n`);
  });
});
