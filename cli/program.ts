import { Command } from 'commander';
import { resolve } from 'node:path';
import { DEFAULT_STATE_DIR } from './state.js';

/** The root command and what every command shares: its global options and where it writes. */

export const out = (line: string): void => void process.stdout.write(`${line}\n`);
export const err = (line: string): void => void process.stderr.write(`${line}\n`);
export const printJson = (value: unknown) => out(JSON.stringify(value, null, 2));

export const program = new Command('savepoint')
  .description('Durable agent runs on AWS Step Functions — any agent, run locally on the same definition.')
  .option('--state-dir <dir>', 'where the local ledger, the simulated world and the logs live', DEFAULT_STATE_DIR)
  .option('--stack <name>', 'work on a deployed stack (found by its CloudFormation outputs, with your AWS credentials) instead of the local state directory')
  .option('--region <region>', 'the deployed stack\'s region (default: your AWS configuration\'s)')
  .showHelpAfterError();

export const stateDir = () => resolve(program.opts<{ stateDir: string }>().stateDir);
export const deployed = () => program.opts<{ stack?: string; region?: string }>();
export const AGENT_HELP = 'the agent: a name (agents/<name>/agent.ts) or the path of its module (default: $SAVEPOINT_AGENT)';
export const defaultAgent = process.env['SAVEPOINT_AGENT'] || undefined;
