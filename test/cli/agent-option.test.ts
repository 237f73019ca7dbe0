import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCommand } from '../../cli/run.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { workspace } from '../support/cli-process.js';

/**
 * `--agent` where the CLI can know it without being told: `resume <runId>` (the command printed
 * after a Ctrl-C) finds the run's agent in the ledger; where it cannot, the message names the
 * option and the agents there are, not a schema's words. In process: the subject is the command.
 */

const day = makeSampleDay(3, { plain: 1, already_refunded: 0, mismatch: 1, large: 0 });
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** What commander hands `run` / `resume`, from `args(...)` of a workspace. */
function optionsOf(args: string[], more: Record<string, unknown>): Record<string, unknown> {
  const value = (name: string) => args[args.indexOf(name) + 1];
  return { stateDir: value('--state-dir'), worldData: value('--world-data'), template: value('--template'), failRate: '0', seed: '1', crashRate: '0', approve: 'reject', json: false, memory: false, resume: false, ...more };
}

const io = () => {
  const lines: string[] = [];
  return { lines, out: (line: string) => lines.push(line), err: (line: string) => lines.push(line), interactive: false };
};

describe('the agent of run and resume', () => {
  it("resume <runId> without --agent resumes the run with the agent the ledger names", async () => {
    const { stateDir, args } = await workspace('agent-option', day);
    dirs.push(dirname(stateDir));
    const first = await runCommand(optionsOf(args(), { agent: 'refund-reconciler', runId: 'nightly' }), io());
    expect(first.report.status).toBe('succeeded');

    const resumed = await runCommand(optionsOf(args(), { agent: undefined, runId: 'nightly', resume: true }), io());
    expect(resumed).toMatchObject({ action: 'already finished', report: { runId: 'nightly', agent: 'refund-reconciler', status: 'succeeded' } });

    await expect(runCommand(optionsOf(args(), { agent: undefined, runId: 'no-such-run', resume: true }), io())).rejects.toThrow(`no run no-such-run in ${stateDir}`);
  });

  it('run without --agent names the option and the agents found by name', async () => {
    const { stateDir, args } = await workspace('no-agent', day);
    dirs.push(dirname(stateDir));
    await expect(runCommand(optionsOf(args(), { agent: undefined, memory: true }), io())).rejects.toThrow(
      /^name the agent to run: --agent <name\|path> \(or \$SAVEPOINT_AGENT\); the agents found by name: .*refund-reconciler, support-triage/,
    );
  });
});

describe('running an edited agent on the input of a finished run', () => {
  it("says the agent changed since that run, and how to start a new one", async () => {
    const { stateDir, args } = await workspace('edited-agent', day);
    dirs.push(dirname(stateDir));
    await runCommand(optionsOf(args(), { agent: 'refund-reconciler' }), io());
    // The same agent with one word more in its system prompt: another fingerprint, the same default run id.
    const edited = join(dirname(stateDir), 'edited-agent.ts');
    const original = new URL('../../agents/refund-reconciler/agent.dev.ts', import.meta.url).pathname;
    writeFileSync(edited, `import { refundReconciler } from ${JSON.stringify(original)};\nexport default { ...refundReconciler, system: refundReconciler.system + ' Be brief.' };\n`);

    const again = io();
    const outcome = await runCommand(optionsOf(args(), { agent: edited }), again);
    expect(outcome.action).toBe('already finished');
    const said = again.lines.find((line) => line.includes('had already finished'));
    expect(said).toMatch(
      new RegExp(`^savepoint: run ${outcome.report.runId} had already finished, on other code: the agent changed since \\(fingerprint \\w+ then, \\w+ now\\)\\. This is that run's report; to run the changed agent on the same input, pass --run-id <a new id> to start another run, e\\.g\\. --run-id ${outcome.report.runId}-2$`),
    );
  });
});
