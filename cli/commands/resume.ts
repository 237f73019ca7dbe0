import type { Command } from 'commander';
import { engineOptions } from '../options.js';
import { runAndReport } from './run.js';

/** `savepoint resume <runId>`: `run` for a run that exists, locally or on a deployed stack. */
export function registerResumeCommand(program: Command): void {
  program
    .command('resume <runId>')
    .description('resume an unfinished run where it stopped (after a crash, an interrupt, or a failure)')
    .addOption(engineOptions.agent())
    .option('--force', 'resume even though the code changed since the run started', false)
    .addOption(engineOptions.failRate())
    .addOption(engineOptions.seed())
    .addOption(engineOptions.approve())
    .option('--approval-timeout <seconds>', 'escalate approvals not decided within this time')
    .addOption(engineOptions.worldData({ brief: true }))
    .addOption(engineOptions.ledger({ brief: true }))
    .addOption(engineOptions.durability({ brief: true }))
    .addOption(engineOptions.json())
    .addOption(engineOptions.crashAt({ brief: true }))
    .addOption(engineOptions.crashRate({ brief: true }))
    .addOption(engineOptions.crashSeed({ brief: true }))
    .addOption(engineOptions.maxRecoveries())
    .addOption(engineOptions.prices({ brief: true }))
    .addOption(engineOptions.fleetBudget({ brief: true }))
    .addOption(engineOptions.template())
    .addOption(engineOptions.wait())
    .action((runId: string, options: Record<string, unknown>) => runAndReport({ ...options, runId, resume: true, memory: false }));
}
