import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { runCommand } from '../../cli/run.js';
import { workspace } from '../support/cli-process.js';

/** The refund reconciler's report counts as skipped only the requests it found already refunded: a run stopped early leaves the rest undecided. */

const day = makeSampleDay(5, { plain: 2, already_refunded: 1, mismatch: 0, large: 0 });
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

async function run(maxSteps?: string) {
  const { stateDir, args } = await workspace('report', day);
  dirs.push(dirname(stateDir));
  const value = (name: string) => args()[args().indexOf(name) + 1];
  const quiet = { out: () => {}, err: () => {}, interactive: false };
  const options = { agent: 'refund-reconciler', stateDir, worldData: value('--world-data'), template: value('--template'), failRate: '0', seed: '1', crashRate: '0', json: false, memory: false, resume: false };
  return (await runCommand({ ...options, ...(maxSteps && { maxSteps }) }, quiet)).report;
}

describe("the refund reconciler's summary", () => {
  it('counts a request the run stopped before deciding as undecided, not skipped', async () => {
    const report = await run('2');
    expect(report.status).toBe('stopped');
    expect(report.summary).toMatchObject({ requests: 3, issued: 0, flagged: 0, skipped: 0, undecided: 3 });
  });

  it('counts the request found already refunded as skipped, once the run is done', async () => {
    expect((await run()).summary).toMatchObject({ requests: 3, issued: 2, flagged: 0, skipped: 1, undecided: 0 });
  });
});
