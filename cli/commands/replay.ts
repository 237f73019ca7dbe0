import type { Command } from 'commander';
import type { ReplayResult } from '../../local/replay/index.js';
import { UsageError } from '../errors.js';
import { counted } from '../../lambdas/shared/text.js';
import { out, printJson } from '../program.js';
import { agentFor, noRunError, withLedgerOnly } from '../target.js';
import { sizeHeapForReplay } from '../replay-heap.js';

/** `savepoint replay <runId>`: re-executes a finished run on this code from its ledger, with no live call. */
export function registerReplayCommand(program: Command): void {
  program
    .command('replay <runId>')
    .description('re-executes a finished or stopped run on this code with no live call (every model turn, tool result, approval and time answered from the ledger): prints identical, or the first divergence; exit 1 when it diverges')
    .option('--agent <name|path>', 'the code to replay on (default: the agent named in the run)')
    .option('--json', 'print JSON', false)
    .action((runId: string, options: { agent?: string; json: boolean }) =>
      withLedgerOnly('replay', options.agent, runId, async ({ ledger, engine, parts }) => {
        const run = await ledger.getRun(runId);
        if (!run) throw await noRunError(runId, { ledger, parts });
        // A run still running has no end to compare with: bad input (exit 2), not a divergence (exit 1).
        if (run.status === 'running') throw new UsageError(`runId: run ${runId} is still running; replay a finished or stopped run`);
        sizeHeapForReplay(run.steps);
        const agent = await agentFor(options.agent, run.agent, engine ?? null);
        if (!agent) throw new UsageError(`replay needs the agent's code: name it with --agent (the run is of agent ${run.agent})`);
        // Loaded when a replay runs: the engine it runs on is no part of every other command's start.
        const { replayRun } = await import('../../local/replay/index.js');
        const result = await replayRun({ agent, source: ledger, runId });
        if (options.json) printJson(result);
        else out(formatReplay(result));
        if (!result.identical) process.exitCode = 1;
      }),
    );
}

export function formatReplay(result: ReplayResult): string {
  const answered = `${counted(result.answered.turns, 'model turn')}, ${counted(result.answered.toolCalls, 'tool call')} and ${counted(result.answered.approvals, 'approval')} answered from the ledger`;
  const timing = `${result.live.model + result.live.tools} live calls; replay ${result.wallMs} ms (${result.setupMs} ms of it setting up), the run ${result.recordedWallMs} ms`;
  const divergence = result.divergence;
  if (!divergence) return `${result.runId}: identical (${answered}; ${timing})`;
  const at = `turn ${divergence.turn}${divergence.call === undefined ? '' : `, call ${divergence.call}`}`;
  return [`${result.runId}: diverged at ${at} (${divergence.what}): ${divergence.why}`, `  recorded: ${divergence.recorded}`, `  produced: ${divergence.produced}`, `  (${answered} before it; ${timing})`].join('\n');
}
