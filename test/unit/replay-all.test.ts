import { describe, expect, it } from 'vitest';
import type { AgentDefinition } from '../../lambdas/define.js';
import type { DamagedRunOptions } from '../../lambdas/ledger/ledger.js';
import { LedgerIntegrityError } from '../../lambdas/shared/errors.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import type { ReplayResult } from '../../local/replay/index.js';
import { MAX_REPLAYED_RUNS, replayAll, replayAllSummary, type ReplayAllDeps } from '../../cli/replay-all.js';

/**
 * The walk of `savepoint replay --all` over a ledger's runs (cli/replay-all.ts), with the listing and
 * the replay given to it. The command over a state directory's real runs, through the CLI:
 * test/replay/cli.test.ts.
 */
type Listed = Pick<RunRecord, 'runId' | 'agent' | 'status' | 'createdAt' | 'steps'>;
const run = (runId: string, agent: string, status: RunRecord['status'], createdAt: string): Listed => ({ runId, agent, status, createdAt, steps: 3 });
const agentOf = (name: string) => ({ name }) as AgentDefinition;
const agentNamed = async (name: string) => agentOf(name);
const replayed = (runId: string, identical: boolean): ReplayResult => ({
  runId,
  identical,
  ...(!identical && { divergence: { turn: 1, what: 'model request', why: 'the system prompt changed', recorded: 'a', produced: 'b' } }),
  answered: { turns: 1, toolCalls: 0, approvals: 0 },
  live: { model: 0, tools: 0 },
  wallMs: 1,
  setupMs: 0,
  recordedWallMs: 2,
});

/** A ledger that lists `runs` (newest first, as a ledger does), naming `damaged` to onDamaged. */
function listing(runs: Listed[], damaged: string[] = []): ReplayAllDeps['ledger'] & { asked: string[] } {
  const asked: string[] = [];
  const list = (agent: string | undefined, limit = 50, options?: DamagedRunOptions) => {
    asked.push(`${agent ?? '*'}:${limit}`);
    for (const runId of damaged) options?.onDamaged?.(runId, new LedgerIntegrityError({ runId, record: `run ${runId}` }, 'its seal does not verify'));
    return Promise.resolve(runs.filter((one) => agent === undefined || one.agent === agent).slice(0, limit) as RunRecord[]);
  };
  return { asked, listRuns: (limit, options) => list(undefined, limit, options), listRunsOf: (agent, limit, options) => list(agent, limit, options) };
}

describe('replay --all (cli/replay-all.ts)', () => {
  it('replays every ended run on its own agent, each agent loaded once, and leaves running runs out', async () => {
    const ledger = listing([run('d3', 'refunds', 'succeeded', '2026-11-30T01:00:00Z'), run('t1', 'triage', 'failed', '2026-11-29T01:00:00Z'), run('d2', 'refunds', 'running', '2026-11-29T00:00:00Z'), run('d1', 'refunds', 'killed', '2026-11-28T01:00:00Z')]);
    const loaded: string[] = [];
    const done: string[] = [];
    const result = await replayAll({
      ledger,
      agentNamed: async (name) => (loaded.push(name), agentOf(name)),
      replay: async (agent, runId) => replayed(`${runId}@${agent.name}`, runId !== 't1'),
      onRun: (outcome) => done.push('result' in outcome ? outcome.result.runId : outcome.notReplayed.runId),
    });
    expect(ledger.asked).toEqual([`*:${MAX_REPLAYED_RUNS + 1}`]);
    expect(loaded).toEqual(['refunds', 'triage']);
    expect(done).toEqual(['d3@refunds', 't1@triage', 'd1@refunds']);
    expect(result).toMatchObject({ identical: 2, diverged: 1, running: ['d2'], notReplayed: [], damaged: [], more: false, ok: false });
    expect(replayAllSummary(result)).toBe('2 of 3 runs replayed identical; 1 diverged; 1 still running, left out');
  });

  it("with --agent, lists that agent's runs alone (a keyed query on DynamoDB), all replayed on it; with --since, only the runs of that day on", async () => {
    const ledger = listing([run('d3', 'refunds', 'succeeded', '2026-11-30T01:00:00Z'), run('t1', 'triage', 'succeeded', '2026-11-29T01:00:00Z'), run('d1', 'refunds', 'succeeded', '2026-11-28T01:00:00Z')]);
    const result = await replayAll({
      ledger,
      agent: agentOf('refunds'),
      since: '2026-11-29',
      agentNamed: () => Promise.reject(new Error('--agent names the code')),
      replay: async (agent, runId) => replayed(`${runId}@${agent.name}`, true),
    });
    expect(ledger.asked).toEqual([`refunds:${MAX_REPLAYED_RUNS + 1}`]);
    expect(result.runs.map((one) => one.runId)).toEqual(['d3@refunds']);
    expect(result).toMatchObject({ agent: 'refunds', identical: 1, ok: true });
    expect(replayAllSummary(result)).toBe('1 of 1 run of agent refunds replayed identical');
    const none = await replayAll({ ledger, agent: agentOf('billing'), agentNamed, replay: () => Promise.reject(new Error('no run to replay')) });
    expect(replayAllSummary(none)).toBe('no runs of agent billing to replay');
    expect(none.ok).toBe(true);
  });

  it('fails the check for a run whose code is not here or does not load, a replay that throws, and a damaged record, and goes on with the others', async () => {
    const ledger = listing([run('x1', 'gone', 'succeeded', '2026-11-30T03:00:00Z'), run('b1', 'broken', 'succeeded', '2026-11-30T02:30:00Z'), run('d2', 'refunds', 'succeeded', '2026-11-30T02:00:00Z'), run('d1', 'refunds', 'stopped', '2026-11-30T01:00:00Z')], ['d0']);
    const result = await replayAll({
      ledger,
      agentNamed: async (name) => {
        if (name === 'broken') throw new SyntaxError("Unexpected token '}'");
        return name === 'gone' ? undefined : agentOf(name);
      },
      replay: async (_agent, runId) => {
        if (runId === 'd2') throw new Error('runId: no run d2 in the ledger');
        return replayed(runId, true);
      },
    });
    expect(result.notReplayed).toEqual([
      { runId: 'x1', agent: 'gone', why: 'no code for agent gone here: replay its runs with --agent <its module>' },
      { runId: 'b1', agent: 'broken', why: "the code of agent broken does not load: Unexpected token '}'" },
      { runId: 'd2', agent: 'refunds', why: 'runId: no run d2 in the ledger' },
    ]);
    expect(result.damaged).toEqual([{ runId: 'd0', error: expect.stringContaining('its seal does not verify') }]);
    expect(result).toMatchObject({ identical: 1, diverged: 0, ok: false });
    expect(replayAllSummary(result)).toBe('1 of 4 runs replayed identical; 3 not replayed; 1 damaged run left out');
  });

  it('says when more runs than it reads were left out, unless --since leaves them out anyway', async () => {
    const many = Array.from({ length: MAX_REPLAYED_RUNS + 1 }, (_, index) => run(`r${index}`, 'refunds', 'running', `2026-11-30T00:00:${String(59 - Math.floor(index / 200)).padStart(2, '0')}Z`));
    const deps = { agentNamed, replay: () => Promise.reject(new Error('nothing ended')) };
    const all = await replayAll({ ledger: listing(many), ...deps });
    expect(all).toMatchObject({ more: true, runs: [] });
    expect(all.running).toHaveLength(MAX_REPLAYED_RUNS);
    expect(replayAllSummary(all)).toBe(`no ended runs to replay; ${MAX_REPLAYED_RUNS} still running, left out; only the newest ${MAX_REPLAYED_RUNS} read: --since narrows them`);
    many.at(-1)!.createdAt = '2026-11-29T00:00:00Z';
    expect((await replayAll({ ledger: listing(many), since: '2026-11-30', ...deps })).more).toBe(false);
    expect((await replayAll({ ledger: listing(many), ...deps })).more).toBe(true);
  });
});
