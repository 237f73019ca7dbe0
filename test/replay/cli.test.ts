import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { providerJournal, savepoint, smallDay } from '../support/cli-process.js';

// The commands as a user runs them, each its own process, on one state directory.
describe('savepoint replay and fork, through the CLI', () => {
  const root = mkdtempSync(join(tmpdir(), 'savepoint-replay-cli-'));
  const stateDir = join(root, 'state');
  const cli = (...args: string[]) => savepoint(['--state-dir', stateDir, ...args]);
  const refunds = () => providerJournal(stateDir).filter((entry) => entry.kind === 'refund').length;
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  /**
   * The run's day, which the state directory keeps for the commands after it: six refund requests,
   * two of them large (two approvals), not the sample day's 25 — the same turns of each kind, replayed
   * and forked the same way, for less CPU (the file: 3.8–4.6 s against 5.2–5.6 s, two sittings on 2026-12-05).
   */
  const day = join(root, 'day.json');
  writeFileSync(day, JSON.stringify(smallDay));

  it('replays a run identically, names a changed system prompt, forks it without paying again, and replays them all at once (--all)', async () => {
    expect((await cli('run', '--agent', 'refund-reconciler', '--world-data', day, '--approve', 'approve', '--run-id', 'day1')).code).toBe(0);
    const paid = refunds();
    expect(paid).toBeGreaterThan(0);
    // The finished run asked for again on another model: StartRun's refusal is the answer (exit 2), not the old run's report.
    const otherModel = await savepoint(['--state-dir', stateDir, 'run', '--agent', 'refund-reconciler', '--run-id', 'day1', '--model', 'anthropic:claude-haiku-4-5'], { env: { ANTHROPIC_API_KEY: 'sk-ant-never-used' } });
    expect(otherModel.code).toBe(2);
    expect(otherModel.stdout).not.toMatch(/^run day1 \(|agent steps/m);
    expect(otherModel.stderr).toMatch(/^savepoint: model: run day1 runs on sim:savepoint-sim-1, not anthropic:claude-haiku-4-5: start a new run id to use another model$/m);
    // And on another --input: refused (exit 2), not run on the run's own input and reported as "already finished".
    const otherInput = await cli('run', '--agent', 'refund-reconciler', '--run-id', 'day1', '--input', '{"date":"2026-11-27"}');
    expect(otherInput.code, otherInput.stdout).toBe(2);
    expect(otherInput.stdout).not.toMatch(/already finished|^run day1 \(/m);
    expect(otherInput.stderr).toMatch(/^savepoint: runId: run day1 was started with the input \{"date":"2026-11-28"\}, not \{"date":"2026-11-27"\}$/m);
    // Budgets for a run that has its own: said not applied, not silently ignored.
    const budgets = await cli('run', '--agent', 'refund-reconciler', '--run-id', 'day1', '--max-steps', '3', '--max-dollars', '0.5');
    expect(budgets.code, budgets.stderr).toBe(0);
    expect(budgets.stdout).toMatch(/^savepoint: run day1 keeps the budgets it started with: --max-steps, --max-dollars not applied/m);

    const same = await cli('replay', 'day1');
    expect(same.stdout, same.stderr).toMatch(/^day1: identical \(\d+ model turns, \d+ tool calls and 2 approvals answered from the ledger; 0 live calls; replay \d+ ms .*, the run \d+ ms\)/);
    expect(same.code).toBe(0);

    const agent = join(root, 'refund-v2.ts');
    const original = new URL('../../agents/refund-reconciler/agent.dev.ts', import.meta.url).pathname;
    writeFileSync(agent, `import { refundReconciler } from '${original}';\nexport default { ...refundReconciler, system: refundReconciler.system + '\\nNever refund more than $100.' };\n`);
    const changed = await cli('replay', 'day1', '--agent', agent);
    expect(changed.stdout, changed.stderr).toMatch(/^day1: diverged at turn 1 \(model request\): the system prompt changed\n {2}recorded: system prompt [0-9a-f]{16}/);
    expect(changed.code).toBe(1);
    // Only the agent's report differs (a cent more): diverged at the report, its differing part in --json.
    const reporting = join(root, 'refund-report.ts');
    writeFileSync(reporting, `import { refundReconciler } from '${original}';\nexport default { ...refundReconciler, report: (calls) => { const r = refundReconciler.report(calls); return { ...r, issuedCents: r.issuedCents + 1 }; } };\n`);
    const reported = await cli('replay', 'day1', '--agent', reporting, '--json');
    expect(reported.code, reported.stderr).toBe(1);
    const { divergence } = JSON.parse(reported.stdout) as { divergence: { what: string; recorded: string; produced: string; why: string } };
    expect(divergence).toMatchObject({ what: 'report', why: "the agent's report differs" });
    expect(divergence.recorded).toMatch(/"issuedCents":\d+/);
    expect(divergence.produced).not.toBe(divergence.recorded);

    const dry = await cli('fork', 'day1', '--at', '4', '--effects', 'dry', '--yes', '--approve', 'approve');
    expect(dry.stdout).toMatch(/^dry fork of day1 at turn 4: no write is sent/);
    expect(dry.code).toBe(0);
    // The same fork again is that run, finished (nothing starts); another fork under its run id is refused before any execution.
    const again = await cli('fork', 'day1', '--at', '4', '--effects', 'dry', '--yes', '--approve', 'approve');
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/^savepoint: run day1-fork-4 had already finished; nothing to do/m);
    const other = await cli('fork', 'day1', '--at', '4', '--yes', '--approve', 'approve');
    expect(other).toMatchObject({ code: 2, stderr: expect.stringMatching(/^savepoint: --run-id: run day1-fork-4 exists already and is not this fork: name a new run id$/m) });
    expect(other.stdout).not.toMatch(/— execution arn:/);
    // An edited result of the last copied turn: named in the report, sealed in the fork's lineage.
    const edited = await cli('fork', 'day1', '--at', '3', '--run-id', 'day1-edited', '--effects', 'dry', '--result', '1={"error":"order_not_found"}', '--yes', '--approve', 'approve', '--json');
    expect(edited.code, edited.stderr).toBe(0);
    expect(edited.stderr).toContain('what the fork changes against the parent:\n  the result of turn 2 call 1, as the model sees it: {"error":"order_not_found"}');
    expect((await cli('fork', 'day1', '--at', '3', '--result', 'one=2', '--yes')).stderr).toMatch(/--result: expected <call>=<json>/);
    // A turn past the run's end is refused before the hazard report, which would report a turn the run never had.
    const past = await cli('fork', 'day1', '--at', '999', '--yes');
    expect(past).toMatchObject({ code: 2, stdout: '' });
    // Named as typed: the CLI's options, not the run request's fields (fork.at, fork.results[0].call).
    expect(past.stderr).toMatch(/^savepoint: --at: run day1 has \d+ turns; fork at 1 to \d+\n$/);
    expect(await cli('fork', 'day1', '--at', '3', '--result', '9=1', '--yes')).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(/^savepoint: --result 9: turn 2 of the parent made \d+ tool calls?, not a call 9\n$/) });
    expect(await cli('fork', 'day1', '--at', '1', '--result', '1=1', '--yes')).toMatchObject({ code: 2, stdout: '', stderr: 'savepoint: --result: a fork at turn 1 copies no tool result to edit; fork at a later turn\n' });
    // What StartRun would refuse is refused before the hazard report, and before anything starts.
    for (const [args, message] of [
      [['--run-id', 'day1'], "savepoint: --run-id: a fork needs a run id of its own, not its parent's (day1)\n"],
      [['--input', '{"date":5}'], /^savepoint: invalid --input of agent refund-reconciler: date: .*\n$/],
      [['--model', 'nope:x'], /^savepoint: --model: invalid model spec "nope:x": unknown provider "nope"/],
    ] as const) {
      expect(await cli('fork', 'day1', '--at', '2', ...args, '--yes')).toMatchObject({ code: 2, stdout: '', stderr: typeof message === 'string' ? message : expect.stringMatching(message) });
    }
    const reuse = await cli('fork', 'day1', '--at', '4', '--run-id', 'day1-reuse', '--yes', '--approve', 'approve');
    expect(reuse.stdout).toMatch(/^fork of day1 at turn 4, effects reuse: the parent made \d+ writes from turn 4 on:\n {2}turn \d+ call \d+: issue_refund/);
    expect(reuse.code).toBe(0);
    expect(refunds()).toBe(paid);

    const verified = await cli('verify', '--all');
    expect(verified.stdout).toMatch(/4 of 4 runs verify/);

    // Every run at once, on this code (the forks included): one line each, as each ends, then the check's.
    const all = await cli('replay', '--all');
    expect(all.code, all.stderr).toBe(0);
    expect(all.stderr).toBe('savepoint: replaying 4 runs…\n');
    expect(all.stdout.split('\n').map((line) => line.split(':')[0])).toEqual(['day1-reuse', 'day1-edited', 'day1-fork-4', 'day1', '4 of 4 runs replayed identical', '']);
    expect(all.stdout).toMatch(/^day1: identical \(\d+ model turns, \d+ tool calls and 2 approvals answered from the ledger; 0 live calls;/m);
    // On the changed prompt, every run of its agent diverges at its first turn of its own: exit 1, each named in --json.
    const onChanged = await cli('replay', '--all', '--agent', agent, '--json');
    expect(onChanged.code, onChanged.stderr).toBe(1);
    const checked = JSON.parse(onChanged.stdout) as { agent: string; runs: { runId: string; identical: boolean; divergence?: { why: string } }[]; identical: number; diverged: number; ok: boolean };
    expect(checked).toMatchObject({ agent: 'refund-reconciler', identical: 0, diverged: 4, ok: false });
    expect(checked.runs.map((run) => run.divergence?.why)).toEqual(Array(4).fill('the system prompt changed'));
    // Only the runs of a day on (--since), and bad input refused before anything is read (exit 2).
    expect(await cli('replay', '--all', '--since', '2999-01-01')).toMatchObject({ code: 0, stdout: 'no runs to replay\n' });
    expect(await cli('replay', 'day1', '--all')).toMatchObject({ code: 2, stdout: '', stderr: 'savepoint: replay takes a run id, or --all\n' });
    expect(await cli('replay', '--all', '--since', 'yesterday')).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(/^savepoint: invalid options: --since: expected a date YYYY-MM-DD/) });
  });
});
