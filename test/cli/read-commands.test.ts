import { mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { registerBreakersCommand } from '../../cli/commands/breakers.js';
import { registerWorldCommand } from '../../cli/commands/world.js';
import { program } from '../../cli/program.js';
import { savepoint as cli, workspaceWithRun } from '../support/cli-process.js';

/**
 * The commands that read a state directory, called in process through the CLI's own command
 * tree (the subject is what they say, not the process): `breakers` and `world`.
 */

const day = makeSampleDay(3, { plain: 1, already_refunded: 0, mismatch: 1, large: 0 });
let stateDir: string;
beforeAll(async () => {
  ({ stateDir } = await workspaceWithRun('read-commands', day));
  registerBreakersCommand(program);
  registerWorldCommand(program);
});
afterAll(() => rmSync(dirname(stateDir), { recursive: true, force: true }));

/** Runs `savepoint <args>` in this process; what it printed on stdout. */
async function savepoint(...args: string[]): Promise<string> {
  let printed = '';
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((printed += String(chunk)), true));
  try {
    await program.parseAsync(args, { from: 'user' });
  } finally {
    write.mockRestore();
  }
  return printed;
}

describe('savepoint breakers', () => {
  it("without --agent lists the breakers the ledger's runs use: their model's and their agent's tools'", async () => {
    expect(await savepoint('--state-dir', stateDir, 'breakers')).toMatch(/^model:sim:savepoint-sim-1 +closed +0 trip\(s\)\ntools:refund-reconciler +closed +0 trip\(s\)\n$/);
  });
});

describe('savepoint world', () => {
  it("shows the world of the state directory's runs", async () => {
    expect(await savepoint('--state-dir', stateDir, 'world', '--agent', 'refund-reconciler')).toMatch(/^1 refunds? paid/);
    // Without --agent: the one agent that ran in the state directory.
    expect(await savepoint('--state-dir', stateDir, 'world')).toMatch(/^1 refunds? paid/);
  });

  it('says that nothing ran in a directory without a ledger, and makes nothing there', async () => {
    const empty = join(dirname(stateDir), 'empty');
    mkdirSync(empty);
    await expect(savepoint('--state-dir', empty, 'world', '--agent', 'refund-reconciler')).rejects.toThrow(/^no ledger in \S+empty: nothing ran there, so its world is empty; run `savepoint run` first, or pass --state-dir$/);
    expect(readdirSync(empty)).toEqual([]);
  });

  // Through the CLI's process (the exit code is part of it): opening the world of an agent that never ran
  // there made its journal (the support triage agent's mail.jsonl) in the refund reconciler's directory.
  it('says that an agent that never ran in the state directory has no world there, exit 2, and makes nothing there', async () => {
    const before = readdirSync(stateDir).sort();
    const exit = await cli(['--state-dir', stateDir, 'world', '--agent', 'support-triage']);
    expect(exit.code, exit.stderr).toBe(2);
    expect(exit.stderr).toMatch(/^savepoint: agent support-triage never ran in \S+, so its world there is empty; it holds runs of refund-reconciler: name one of them with --agent, or pass --state-dir\n$/);
    expect(readdirSync(stateDir).sort()).toEqual(before);
  });

  it('says that a --memory run keeps nothing for it to read, where there is no state directory', async () => {
    await expect(savepoint('--state-dir', join(dirname(stateDir), 'none'), 'world', '--agent', 'refund-reconciler')).rejects.toThrow(
      /^no state directory \S+: run `savepoint run` first, without --memory \(a --memory run keeps nothing to show\), or pass --state-dir$/,
    );
  });
});
