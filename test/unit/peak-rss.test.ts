import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';

const PEAK_RSS = new URL('../../bench/peak-rss.mjs', import.meta.url).pathname;

describe("bench/peak-rss.mjs: a process's own peak RSS", () => {
  it("is the child's own, not the peak of the large process that started it", () => {
    // This process past 300 MB of touched memory; Linux carries a process's maxrss over to its children.
    const ballast = Buffer.alloc(300 * 2 ** 20, 1);
    const { stderr } = spawnSync(process.execPath, ['--import', PEAK_RSS, '-e', 'Buffer.alloc(20 * 2 ** 20, 1)'], { encoding: 'utf8' });
    ballast.fill(2);
    const peakKb = Number(/^savepoint-bench-peak-rss-kb (\d+)$/m.exec(stderr)?.[1]);
    expect(peakKb).toBeGreaterThan(20 * 1024);
    expect(peakKb).toBeLessThan(200 * 1024);
  });
});
