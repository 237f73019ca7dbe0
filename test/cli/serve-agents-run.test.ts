import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { connect } from '../../client/index.js';
import { leftBehind, savepoint, workspace } from '../support/cli-process.js';
import { sampleDay } from '../support/refund-harness.js';
import { startServe } from '../support/serve-process.js';

/**
 * The commands on a state directory `savepoint serve` of several agents keeps, for the agent that
 * is not the state directory's own: its run is that agent's (agents/<name>/), on that agent's
 * engine, and `run`, `resume` (through serve, or once serve has stopped), `world`, `verify` and
 * `kill` (of it pruned) report it as they report the first agent's.
 */
const { children, dirs } = leftBehind();
const SECOND_AGENT = 'support-triage';
const input = (inbox: string) => JSON.stringify({ inbox });

describe("a serve of several agents: the second agent's run", () => {
  it('is reported by run to its end from its own engine, resumed by its id alone, its world shown by world, and its prune verified', async () => {
    const { stateDir, args } = await workspace('serve-agents-run', sampleDay);
    dirs.push(dirname(stateDir));
    const serving = await startServe([...args('serve'), '--agent', SECOND_AGENT], children);
    try {
      const dir = ['--state-dir', stateDir];
      // The global kill switch ends the run before its first step: its end comes at once, without a person.
      expect((await savepoint([...dir, 'kill', '--all'])).code).toBe(0);

      const run = await savepoint([...dir, 'run', '--agent', SECOND_AGENT, '--input', input('support@acme.example'), '--run-id', 'killed-1', '--json']);
      expect(run.code, run.stderr).toBe(3);
      // Its execution's figures, read from its own engine's Step Functions API (the first agent's knows no such execution).
      expect(JSON.parse(run.stdout)).toMatchObject({ runId: 'killed-1', agent: SECOND_AGENT, status: 'killed', execution: { executionArn: expect.stringContaining(`:execution:Savepoint-${SECOND_AGENT}:killed-1-`), status: 'SUCCEEDED' } });

      // Resumed by its id alone: the run names its agent (serve asks a start of several agents to name one).
      const resumed = await savepoint([...dir, 'resume', 'killed-1']);
      expect(resumed.stderr).toBe('');
      expect(resumed.code).toBe(3);
      expect(resumed.stdout).toContain('savepoint: run killed-1 had already finished; nothing to do');
      expect(resumed.stdout).toMatch(/^run killed-1 \(support-triage .*\): killed/m);

      // A run that sends replies, its approvals decided through serve.
      expect((await savepoint([...dir, 'kill', '--all', '--lift'])).code).toBe(0);
      const client = await connect({ stateDir });
      await client.start({ agent: SECOND_AGENT, input: { inbox: 'support@acme.example' }, runId: 'replies', config: { approvalTimeoutSeconds: 3600 } });
      for (let run = await client.wait('replies', { untilInput: true }); run.lifecycle === 'input_required'; run = await client.wait('replies', { untilInput: true })) {
        for (const approval of await client.approvals('replies')) await client.decide(approval.approvalId, 'approve');
      }
      const replied = (await client.get('replies'))!.report.summary as { replied: number };
      expect(replied.replied).toBeGreaterThan(0);
      // Every run of the state directory replayed while serve runs the agents: each on its own agent's
      // code (the engine that runs it), not the state directory's first agent's.
      const replayed = await savepoint([...dir, 'replay', '--all', '--json']);
      expect(replayed.code, replayed.stderr + replayed.stdout).toBe(0);
      const checked = JSON.parse(replayed.stdout) as { runs: { runId: string; identical: boolean }[]; ok: boolean };
      expect(checked).toMatchObject({ diverged: 0, notReplayed: [], ok: true });
      expect(checked.runs.map((one) => one.runId).sort()).toEqual(['killed-1', 'replies']);
      serving.child.kill('SIGTERM');
      expect(await serving.exited).toBe(0);

      // Its world is the one its engine wrote, in its own directory; none is made at the top.
      const world = await savepoint([...dir, 'world', '--agent', SECOND_AGENT]);
      expect(world.code, world.stderr).toBe(0);
      expect(world.stdout).toMatch(new RegExp(`^${replied.replied} replies sent$`, 'm'));
      expect(existsSync(join(stateDir, 'mail.jsonl'))).toBe(false);

      // Pruned, its runs are named as pruned, and verify --all checks the prune record its agent's ledger keeps.
      const prune = await savepoint([...dir, 'prune', '--finished-before', '2100-01-01']);
      expect(prune, prune.stderr).toMatchObject({ code: 0, stdout: expect.stringMatching(/^pruned 2 runs \(/) });
      const verify = await savepoint([...dir, 'verify', 'killed-1']);
      expect(verify, verify.stderr).toMatchObject({ code: 0, stdout: expect.stringMatching(/^killed-1: pruned, its records removed by pruned at \S+: 2 runs that finished before 2100-01-01T00:00:00.000Z/) });
      const all = await savepoint([...dir, 'verify', '--all', '--json']);
      expect(all.code, all.stderr).toBe(0);
      expect(JSON.parse(all.stdout)).toMatchObject({ runs: [], pruned: { records: [{ runIds: expect.arrayContaining(['killed-1', 'replies']) }], problems: [] }, ok: true });
      const kill = await savepoint([...dir, 'kill', 'replies']);
      expect(kill).toMatchObject({ code: 2, stderr: expect.stringContaining(`savepoint: no run replies in ${stateDir}: it was pruned at `) });
    } finally {
      serving.child.kill('SIGTERM');
      await serving.exited;
    }
  }, 120_000);

  it('is resumed by its id alone once serve has stopped, in its own directory, with its agent', async () => {
    const { stateDir, args } = await workspace('serve-agents-resume', sampleDay);
    dirs.push(dirname(stateDir));
    const serving = await startServe([...args('serve'), '--agent', SECOND_AGENT], children);
    try {
      // A run of the second agent that waits for a person when serve stops: it is left saved in agents/<name>/.
      const client = await connect({ stateDir });
      await client.start({ agent: SECOND_AGENT, input: { inbox: 'support@acme.example' }, runId: 'waiting', config: { approvalTimeoutSeconds: 3600 } });
      expect((await client.wait('waiting', { untilInput: true })).lifecycle).toBe('input_required');
    } finally {
      serving.child.kill('SIGTERM');
      expect(await serving.exited).toBe(0);
    }

    // No engine runs: resume finds the run in its agent's ledger and drives it there, on that agent's engine.
    const resumed = await savepoint(['--state-dir', stateDir, 'resume', 'waiting', '--approve', 'approve', '--json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`savepoint: starting the local stack in ${join(stateDir, 'agents', SECOND_AGENT)}`);
    expect(resumed.stderr).toContain('savepoint: run waiting (resumed)');
    expect(JSON.parse(resumed.stdout)).toMatchObject({ runId: 'waiting', agent: SECOND_AGENT, status: 'succeeded', execution: { executionArn: expect.stringContaining(`:execution:Savepoint-${SECOND_AGENT}:waiting-`) } });
    // Nothing of the run was made at the state directory's own ledger or world.
    expect(existsSync(join(stateDir, 'mail.jsonl'))).toBe(false);
    const status = await savepoint(['--state-dir', stateDir, 'status', 'waiting', '--json']);
    expect(JSON.parse(status.stdout)).toMatchObject({ runId: 'waiting', agent: SECOND_AGENT, status: 'succeeded' });

    // A new run of that agent, with no engine running, goes to its directory too, where serve drives its runs.
    const fresh = await savepoint(['--state-dir', stateDir, 'run', '--agent', SECOND_AGENT, '--input', input('support@acme.example'), '--run-id', 'fresh', '--approve', 'approve', '--json']);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(fresh.stderr).toContain(`savepoint: starting the local stack in ${join(stateDir, 'agents', SECOND_AGENT)}`);
    expect(JSON.parse(fresh.stdout)).toMatchObject({ runId: 'fresh', agent: SECOND_AGENT, status: 'succeeded' });
    expect(existsSync(join(stateDir, 'mail.jsonl'))).toBe(false);
  }, 120_000);
});
