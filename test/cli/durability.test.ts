import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../cli/run.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { workspace } from '../support/cli-process.js';

/**
 * `--durability sync|async` of run and resume (README, "Guarantees and their limits"): the embedded
 * ledger on disk's, so refused where there is none; a sync run finishes like any other. What a
 * power loss leaves of each is test/unit/durability.test.ts's. In process: the subject is the command.
 */
const day = makeSampleDay(3, { plain: 1, already_refunded: 0, mismatch: 1, large: 0 });
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function optionsOf(args: string[], more: Record<string, unknown>): Record<string, unknown> {
  const value = (name: string) => args[args.indexOf(name) + 1];
  return { stateDir: value('--state-dir'), worldData: value('--world-data'), template: value('--template'), failRate: '0', seed: '1', crashRate: '0', approve: 'reject', json: false, memory: false, resume: false, agent: 'refund-reconciler', ...more };
}
const io = () => ({ out: () => undefined, err: () => undefined, interactive: false });

describe('--durability', () => {
  it('runs the day with every write synced, and the run reads back', async () => {
    const { stateDir, args } = await workspace('durability', day);
    dirs.push(dirname(stateDir));
    const synced = await runCommand(optionsOf(args(), { runId: 'synced', durability: 'sync' }), io());
    expect(synced.report).toMatchObject({ runId: 'synced', status: 'succeeded' });
    const again = await runCommand(optionsOf(args(), { runId: 'synced', resume: true, durability: 'async' }), io());
    expect(again).toMatchObject({ action: 'already finished', report: { status: 'succeeded' } });
  });

  it('is refused, naming it, where no ledger is on disk (--memory, --ledger dynalite), before anything starts', async () => {
    const { args } = await workspace('durability-refused', day);
    await expect(runCommand(optionsOf(args(), { durability: 'sync', memory: true }), io())).rejects.toThrow(/durability: durability is the embedded ledger on disk's/);
    await expect(runCommand(optionsOf(args(), { durability: 'sync', ledger: 'dynalite' }), io())).rejects.toThrow(/durability: /);
    await expect(runCommand(optionsOf(args(), { durability: 'always' }), io())).rejects.toThrow(/durability/);
  });
});
