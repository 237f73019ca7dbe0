import type { ChildProcess } from 'node:child_process';
import { appendFileSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { registerPruneCommand } from '../../cli/commands/prune.js';
import { registerReplayCommand } from '../../cli/commands/replay.js';
import { registerResumeCommand } from '../../cli/commands/resume.js';
import { registerStatusCommand } from '../../cli/commands/status.js';
import { registerTraceCommand } from '../../cli/commands/trace.js';
import { registerVerifyCommand } from '../../cli/commands/verify.js';
import { program } from '../../cli/program.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { duplicates, providerJournal, savepoint as savepointProcess, workspace, workspaceWithRun } from '../support/cli-process.js';
import { startServe } from '../support/serve-process.js';
import { connect } from '../../client/index.js';

/**
 * `savepoint prune --finished-before <date>` (issue 26, item 9), in process through the CLI's own
 * command tree, on a state directory with one real run of the refund reconciler.
 */
const day = makeSampleDay(3, { plain: 1, already_refunded: 0, mismatch: 1, large: 0 });
let stateDir: string;
let runId: string;
beforeAll(async () => {
  ({ stateDir } = await workspaceWithRun('prune', day));
  const ledger = EmbeddedLedger.open({ dir: stateDir });
  runId = (await ledger.listRuns(10))[0]!.runId;
  ledger.close();
  for (const register of [registerPruneCommand, registerStatusCommand, registerVerifyCommand, registerReplayCommand, registerTraceCommand, registerResumeCommand]) register(program);
});
afterAll(() => rmSync(dirname(stateDir), { recursive: true, force: true }));

/** Runs `savepoint --state-dir <dir> <args>` in this process; what it printed on stdout. */
async function savepointIn(dir: string, ...args: string[]): Promise<string> {
  let printed = '';
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((printed += String(chunk)), true));
  try {
    await program.parseAsync(['--state-dir', dir, ...args], { from: 'user' });
  } finally {
    write.mockRestore();
  }
  return printed;
}
/** The same, on the file's state directory (its one finished run, which no test removes). */
const savepoint = (...args: string[]) => savepointIn(stateDir, ...args);

describe('savepoint prune', () => {
  it('refuses a date it cannot read, naming the option', async () => {
    await expect(savepoint('prune', '--finished-before', 'last week')).rejects.toThrow(/invalid --finished-before: expected a day YYYY-MM-DD or an ISO date-time$/);
  });

  it('prunes nothing before the run finished', async () => {
    expect(await savepoint('prune', '--finished-before', '2000-01-01')).toBe('no run finished before 2000-01-01T00:00:00.000Z that may be pruned: nothing pruned\n');
    expect(JSON.parse(await savepoint('status', runId, '--json'))).toMatchObject({ status: 'succeeded' });
  });

  it('with --dry-run, names the run it would prune and removes nothing', async () => {
    expect(await savepoint('prune', '--finished-before', '2999-01-01', '--dry-run')).toBe(`would prune 1 run that finished before 2999-01-01T00:00:00.000Z: ${runId} (--dry-run: nothing removed)\n`);
    expect(JSON.parse(await savepoint('prune', '--finished-before', '2999-01-01', '--dry-run', '--json'))).toEqual({ dryRun: true, finishedBefore: '2999-01-01T00:00:00.000Z', prune: [runId], kept: [] });
    expect(JSON.parse(await savepoint('status', runId, '--json'))).toMatchObject({ status: 'succeeded' });
    expect(JSON.parse(await savepoint('verify', '--all', '--json'))).toMatchObject({ ok: true, pruned: { records: [] } });
  });

  it('removes a finished run, and verify --all accounts for it from the sealed prune record', async () => {
    // A state directory of its own (its run the same): the other tests read the file's run, which this one removes.
    const { stateDir: own } = await workspaceWithRun('prune-removed', day);
    const savepoint = (...args: string[]) => savepointIn(own, ...args);
    // The engine's history of the run's executions, and a line of an execution of another run (one still going) beside them.
    const ledger = EmbeddedLedger.open({ dir: own });
    const executions = new Set((await ledger.getRun(runId))!.executions.map((arn) => arn.split(':').pop()!));
    ledger.close();
    const history = join(own, 'history.jsonl');
    const another = JSON.stringify({ at: '2026-12-06T00:00:00.000Z', execution: 'still-going-mxc00000', state: 'CallModel', type: 'TaskScheduled' });
    appendFileSync(history, `${another}\n`);
    const linesOf = () => readFileSync(history, 'utf8').split('\n').filter(Boolean);
    const ofTheRun = linesOf().filter((line) => executions.has((JSON.parse(line) as { execution: string }).execution)).length;
    expect(ofTheRun).toBeGreaterThan(10);
    const { pruned, historyLinesRemoved } = JSON.parse(await savepoint('prune', '--finished-before', '2999-01-01', '--json')) as { pruned: { runIds: string[]; records: number; digest: string }[]; historyLinesRemoved: number };
    expect(pruned).toMatchObject([{ runIds: [runId], digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) }]);
    // Its executions' lines went from history.jsonl, the other run's stayed, and the file is as private as before.
    expect(historyLinesRemoved).toBe(ofTheRun);
    expect(linesOf()).toEqual([another]);
    expect(statSync(history).mode & 0o777).toBe(0o600);
    expect(pruned[0]!.records).toBeGreaterThan(5);
    // A command given its id says it was pruned, and by which prune: not "no run" alone, as of a lost run.
    const prunedRun = new RegExp(`^no run ${runId} in \\S+: it was pruned at \\S+: 1 run that finished before 2999-01-01T00:00:00.000Z \\(\\d+ records, sha256:[0-9a-f]{64}\\), sealed \\(\`savepoint --state-dir \\S+ verify ${runId}\` checks that record\\)$`);
    for (const command of ['status', 'replay', 'trace', 'resume']) await expect(savepoint(command, runId), command).rejects.toThrow(prunedRun);
    await expect(savepoint('status', 'never-started')).rejects.toThrow(/^no run never-started in \S+$/);
    const verified = JSON.parse(await savepoint('verify', '--all', '--json')) as { ok: boolean; pruned: { records: { runIds: string[] }[]; problems: string[] } };
    expect(verified).toMatchObject({ ok: true, pruned: { records: [{ runIds: [runId] }], problems: [] } });
    expect(await savepoint('verify', runId)).toMatch(new RegExp(`^${runId}: pruned, its records removed by pruned at \\S+: 1 run that finished before 2999-01-01T00:00:00.000Z \\(\\d+ records, sha256:[0-9a-f]{64}\\), sealed\\n$`));
    rmSync(dirname(own), { recursive: true, force: true });
  });
});

describe('a state directory after a prune, while savepoint serve runs on it', () => {
  const children = new Set<ChildProcess>();
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  it("names a pruned run through the engine's ledger, checks its prune record (verify --all), and plans a prune (--dry-run) while it runs; a prune itself waits for it to stop", { timeout: 300_000 }, async () => {
    const { stateDir: dir } = await workspaceWithRun('prune-served', day);
    const runs = await savepointProcess(['--state-dir', dir, 'runs', '--json']);
    const [pruned] = (JSON.parse(runs.stdout) as { runs: { runId: string }[] }).runs.map((run) => run.runId);
    expect((await savepointProcess(['--state-dir', dir, 'prune', '--finished-before', '2999-01-01'])).code).toBe(0);
    const serving = await startServe(['--state-dir', dir, 'serve', '--agent', 'refund-reconciler'], children);

    const status = await savepointProcess(['--state-dir', dir, 'status', pruned!]);
    expect(status.code).toBe(2);
    expect(status.stderr).toMatch(new RegExp(`^savepoint: no run ${pruned} in \\S+: it was pruned at \\S+: 1 run that finished before 2999-01-01T00:00:00.000Z \\(\\d+ records, sha256:[0-9a-f]{64}\\), sealed`));
    expect((await savepointProcess(['--state-dir', dir, 'verify', pruned!])).stdout).toMatch(new RegExp(`^${pruned}: pruned, its records removed by pruned at `));
    // verify --all accounts for the pruned run through the engine's ledger too: its prune record listed and checked.
    const all = await savepointProcess(['--state-dir', dir, 'verify', '--all', '--json']);
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({ runs: [], pruned: { records: [{ runIds: [pruned] }], problems: [] }, ok: true });
    const plan = await savepointProcess(['--state-dir', dir, 'prune', '--finished-before', '2999-01-01', '--dry-run', '--json']);
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toEqual({ dryRun: true, finishedBefore: '2999-01-01T00:00:00.000Z', prune: [], kept: [] });
    const refused = await savepointProcess(['--state-dir', dir, 'prune', '--finished-before', '2999-01-01']);
    expect(refused).toMatchObject({ code: 2, stderr: expect.stringMatching(/an engine is running on .*; stop it first/) });

    serving.child.kill('SIGTERM');
    expect(await serving.exited).toBe(0);
    rmSync(dirname(dir), { recursive: true, force: true });
  });
});

describe('a state directory after a prune', () => {
  const children = new Set<ChildProcess>();
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  it("runs the same day again: the pruned run's writes are still known to the ledger, none is paid twice, and its id starts no new run", { timeout: 300_000 }, async () => {
    const { stateDir: dir, args } = await workspace('prune-again', day);
    const first = await savepointProcess(args('run', '--run-id', 'day-a', '--json'));
    expect(first.code, first.stderr).toBe(0);
    const paid = providerJournal(dir).filter((entry) => entry.kind === 'refund');
    const pruned = await savepointProcess(['--state-dir', dir, 'prune', '--finished-before', '2999-01-01', '--json']);
    expect(JSON.parse(pruned.stdout)).toMatchObject({ pruned: [{ runIds: ['day-a'], writes: expect.arrayContaining([paid[0]!.key]) }] });
    // Before the prune record kept the write keys, this start was refused as if the ledger were lost.
    const second = await savepointProcess(args('run', '--run-id', 'day-b', '--json'));
    expect(second.code, second.stderr).toBe(0);
    expect(providerJournal(dir).filter((entry) => entry.kind === 'refund')).toEqual(paid);
    expect(duplicates(dir)).toEqual([]);
    // The pruned run's own id names that run for good: a new run under it is refused (exit 2), naming
    // the prune, and nothing is written or paid; through serve's runs API too (400, before an execution starts).
    const samePruned = /runId: run day-a was pruned at \S+ \(savepoint prune\): its id names that run for good, and a new run under it would repeat what it did; pass another run id/;
    const again = await savepointProcess(args('run', '--run-id', 'day-a', '--json'));
    expect(again.code, again.stderr).toBe(2);
    expect(again.stderr).toMatch(samePruned);
    const serving = await startServe(['--state-dir', dir, 'serve', '--agent', 'refund-reconciler'], children);
    const client = await connect({ stateDir: dir });
    await expect(client.start({ runId: 'day-a', input: { date: day.date } })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(samePruned) });
    expect((await client.list()).runs.map((run) => run.runId)).toEqual(['day-b']);
    serving.child.kill('SIGTERM');
    expect(await serving.exited).toBe(0);
    expect(providerJournal(dir).filter((entry) => entry.kind === 'refund')).toEqual(paid);
    rmSync(dirname(dir), { recursive: true, force: true });
  });
});
