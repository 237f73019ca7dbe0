import type { Command } from 'commander';
import { Option } from 'commander';
import { createInterface } from 'node:readline/promises';
import { hazardReport } from '../../lambdas/runs/fork.js';
import { UsageError } from '../errors.js';
import { engineOptions } from '../options.js';
import { deployed, err, out } from '../program.js';
import { where, withClient } from '../target.js';
import { runAndReport } from './run.js';

/** `savepoint fork <runId> --at <turn>`: a new run whose first turns are the parent's, then live (lambdas/runs/fork.ts). */
export function registerForkCommand(program: Command): void {
  program
    .command('fork <runId>')
    .description("starts a new run from a run's ledger: its turns before --at copied without any call, then live on this code; prints the hazard report first")
    .requiredOption('--at <turn>', 'the fork\'s first turn of its own')
    .option('--run-id <id>', 'the fork\'s run id (default: <runId>-fork-<turn>)')
    .addOption(new Option('--effects <mode>', 'reuse: a write the parent made is answered from its record; dry: no write is sent').choices(['reuse', 'dry']).default('reuse'))
    .option('--fresh-budget', 'the fork\'s budgets count only its own work (default: it inherits what the parent spent)', false)
    .option('--yes', 'start without asking (the hazard report is still printed)', false)
    .addOption(engineOptions.agent())
    .addOption(engineOptions.failRate())
    .addOption(engineOptions.seed())
    .addOption(engineOptions.approve())
    .addOption(engineOptions.json())
    .action(async (parentId: string, options: { at: string; runId?: string; effects: 'reuse' | 'dry'; freshBudget: boolean; yes: boolean; agent?: string } & Record<string, unknown>) => {
      if (deployed().stack) throw new UsageError('fork runs on the local engine for now (a fork on a stack is a StartExecution with "fork" in its input)');
      const at = Number(options.at);
      if (!Number.isInteger(at) || at < 1) throw new UsageError(`--at: a turn number (1 or more), not ${options.at}`);
      const fork = { from: parentId, at, effects: options.effects, ...(options.freshBudget && { freshBudget: true }) };
      // Read the parent and report before the engine owns the state directory.
      const parent = await withClient('fork', options.agent, parentId, async ({ ledger }) => {
        const run = await ledger.getRun(parentId);
        if (!run) throw new UsageError(`no run ${parentId} in ${where()}`);
        return { run, calls: (await ledger.listConversation(parentId)).calls };
      });
      (options['json'] ? err : out)(hazardReport(parent.calls, fork).join('\n'));
      if (!options.yes && process.stdin.isTTY && options.effects === 'reuse') {
        const rl = createInterface({ input: process.stdin, output: process.stdout });
        const answer = await rl.question('start the fork? [y/N] ');
        rl.close();
        if (!/^y(es)?$/i.test(answer.trim())) return out('not started');
      }
      await runAndReport({
        ...options,
        agent: options.agent ?? parent.run.agent,
        runId: options.runId ?? `${parentId}-fork-${at}`.slice(0, 80),
        input: JSON.stringify(parent.run.input),
        fork,
        memory: false,
      });
    });
}
