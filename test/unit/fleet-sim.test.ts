import { describe, expect, it } from 'vitest';
import { logNormal, SimulatedTime } from '../../bench/fleet-sim.js';
import { seededRandom } from '../../sim/random.js';

describe('the fleet benchmark\'s simulated time', () => {
  it('moves only when every participant waits, to the earliest wake-up, rounded up to its grid', async () => {
    const sim = new SimulatedTime(0, 10);
    const woke: string[] = [];
    sim.join();
    sim.join();
    const a = sim.sleep(1_500).then(() => {
      woke.push(`a@${sim.nowMs()}`);
      sim.leave(); // done: the others need not wait for it
    });
    // One participant still works: the clock stays.
    await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setImmediate(resolve));
    expect(sim.nowMs()).toBe(0);
    const b = sim.sleep(4).then(() => woke.push(`b@${sim.nowMs()}`));
    await b;
    expect(woke).toEqual(['b@10']);
    const c = sim.sleep(2_000).then(() => woke.push(`c@${sim.nowMs()}`));
    await Promise.all([a, c]);
    expect(woke).toEqual(['b@10', 'a@1500', 'c@2010']);
  });

  it('draws the same latencies from the same seed, log-normal around the median', () => {
    const draw = (seed: number) => {
      const latency = logNormal(seededRandom(seed), { median: 1_500, p95: 4_000, max: 60_000 });
      return Array.from({ length: 4_000 }, latency);
    };
    const samples = draw(7);
    expect(draw(7)).toEqual(samples);
    const sorted = [...samples].sort((x, y) => x - y);
    expect(sorted[2_000]).toBeGreaterThan(1_350);
    expect(sorted[2_000]).toBeLessThan(1_650);
    expect(sorted[3_800]).toBeGreaterThan(3_400);
    expect(sorted[3_800]).toBeLessThan(4_700);
  });
});
