import type { Command } from 'commander';
import type { ReplayResult } from '../../local/replay/index.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { AgentDir, EngineFile } from '../state.js';
import { parseOptions, UsageError } from '../errors.js';
import { counted } from '../../lambdas/shared/text.js';
import { err, out, printJson } from '../program.js';
import { agentFor, engineRunning, noRunError, withLedgerOnly } from '../target.js';
import { sizeHeapForReplay } from '../replay-heap.js';

/** `savepoint replay <runId>`: re-executes a finished run on this code from its ledger, with no live call. */
export function registerReplayCommand(program: Command): void {
  program
    .command('replay [runId]')
    .description('re-executes a finished or stopped run (or, with --all, every one) on this code with no live call (every model turn, tool result, approval and time answered from the ledger): prints identical, or the first divergence; exit 1 when any diverges')
    .option('--agent <name|path>', 'the code to replay on (default: the agent named in the run; with --all, only the runs of this agent)')
    .option('--all', "every finished or stopped run in the ledger, one after another: a check that a change replays the recorded runs before it is deployed; exit 1 when any diverges or cannot be replayed here", false)
    .option('--since <YYYY-MM-DD>', 'with --all, only the runs created on or after this day')
    .option('--json', 'print JSON', false)
    .action(async (runId: string | undefined, options: { agent?: string; all: boolean; since?: string; json: boolean }) => {
      if ((runId !== undefined) === options.all) throw new UsageError('replay takes a run id, or --all');
      if (options.since !== undefined && !options.all) throw new UsageError('--since: only with --all');
      // Refused before the ledger is opened.
      const since = options.since === undefined ? undefined : await sinceDay(options.since);
      return withLedgerOnly('replay', options.agent, runId, async ({ ledger, engine, parts }) => {
        if (options.all) return replayEveryRun({ ledger, engine: engine ?? null, parts }, { ...options, since });
        const run = await ledger.getRun(runId!);
        if (!run) throw await noRunError(runId!, { ledger, parts });
        // A run still running has no end to compare with: bad input (exit 2), not a divergence (exit 1).
        if (run.status === 'running') throw new UsageError(`runId: run ${runId} is still running; replay a finished or stopped run`);
        sizeHeapForReplay(run.steps);
        const agent = await agentFor(options.agent, run.agent, engine ?? null);
        if (!agent) throw new UsageError(`replay needs the agent's code: name it with --agent (the run is of agent ${run.agent})`);
        // Loaded when a replay runs: the engine it runs on is no part of every other command's start.
        const { replayRun } = await import('../../local/replay/index.js');
        const result = await replayRun({ agent, source: ledger, runId: run.runId });
        if (options.json) printJson(result);
        else out(formatReplay(result));
        if (!result.identical) process.exitCode = 1;
      });
    });
}

/** `--since`: a `YYYY-MM-DD` day that exists, or a UsageError naming it (zod loads only for it). */
async function sinceDay(value: string): Promise<string> {
  const [{ CalendarDate }, { z }] = await Promise.all([import('../../lambdas/shared/dates.js'), import('zod')]);
  return parseOptions(z.object({ since: CalendarDate }), { since: value }).since;
}

/**
 * `replay --all` (cli/replay-all.ts): each run's line as its replay ends (progress on a long check),
 * then the summary; with --json, one document at the end. A run is replayed on `--agent`, else on
 * its own agent's code: the module of the engine that runs that agent (`serve` may run several),
 * else the one found by its name.
 */
async function replayEveryRun(opened: { ledger: Ledger; engine: EngineFile | null; parts?: AgentDir[] }, options: { agent?: string; since?: string; json: boolean }): Promise<void> {
  const [{ replayAll, replayAllSummary }, { replayRun }] = await Promise.all([import('../replay-all.js'), import('../../local/replay/index.js')]);
  const { ledger, engine } = opened;
  const agent = options.agent === undefined ? undefined : await agentFor(options.agent, undefined, engine);
  const result = await replayAll({
    ledger,
    ...(agent && { agent }),
    ...(options.since && { since: options.since }),
    agentNamed: (name) => agentFor(undefined, name, engineRunning(name, opened) ?? null),
    replay: (code, runId) => replayRun({ agent: code, source: ledger, runId }),
    onListed: (runs) => {
      // The young generation as the longest run's replay wants it (the flag holds for the process).
      sizeHeapForReplay(Math.max(0, ...runs.map((run) => run.steps)));
      if (!options.json && runs.length > 1) err(`savepoint: replaying ${counted(runs.length, 'run')}…`);
    },
    onRun: (outcome) => {
      if (options.json) return;
      out('result' in outcome ? formatReplay(outcome.result) : `${outcome.notReplayed.runId}: not replayed: ${outcome.notReplayed.why}`);
    },
  });
  for (const { runId, error } of result.damaged) err(`savepoint: run ${runId} is not replayed: ${error} (savepoint verify ${runId})`);
  if (options.json) printJson(result);
  else out(replayAllSummary(result));
  if (!result.ok) process.exitCode = 1;
}

export function formatReplay(result: ReplayResult): string {
  const answered = `${counted(result.answered.turns, 'model turn')}, ${counted(result.answered.toolCalls, 'tool call')} and ${counted(result.answered.approvals, 'approval')} answered from the ledger`;
  const timing = `${result.live.model + result.live.tools} live calls; replay ${result.wallMs} ms (${result.setupMs} ms of it setting up), the run ${result.recordedWallMs} ms`;
  const divergence = result.divergence;
  if (!divergence) return `${result.runId}: identical (${answered}; ${timing})`;
  const at = `turn ${divergence.turn}${divergence.call === undefined ? '' : `, call ${divergence.call}`}`;
  return [`${result.runId}: diverged at ${at} (${divergence.what}): ${divergence.why}`, `  recorded: ${divergence.recorded}`, `  produced: ${divergence.produced}`, `  (${answered} before it; ${timing})`].join('\n');
}
