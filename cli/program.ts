import { Command } from 'commander';
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { RunReport } from '../lambdas/runs/report.js';
import { formatReport, terminalSafe, type ExecutionFigures } from './format.js';
import { commandHint, resumeWords } from './command-hint.js';
import { DEFAULT_STATE_DIR } from './state.js';
import { noteEnvironmentOptions } from './errors.js';

/** The root command and what every command shares: its global options and where it writes. */

/**
 * A reader that stops reading (`savepoint runs | head -1`) closes the pipe: what it wanted was
 * written, and the rest has nowhere to go. Node reports that as an 'error' event (EPIPE), which
 * unheard ended the command with a stack trace. The command goes on to its end — a run is not cut
 * short because its reader left — and what it writes after is dropped.
 */
function dropOutputOnClosedPipe(stream: NodeJS.WriteStream): void {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
  });
}
dropOutputOnClosedPipe(process.stdout);
dropOutputOnClosedPipe(process.stderr);

// Everything printed passes terminalSafe: what a model or a tool chose cannot steer the terminal.
export const out = (line: string): void => void process.stdout.write(`${terminalSafe(line)}\n`);
export const err = (line: string): void => void process.stderr.write(`${terminalSafe(line)}\n`);
export const printJson = (value: unknown) => out(JSON.stringify(value, null, 2));

export const program = new Command('savepoint')
  .description('Durable agent runs on AWS Step Functions — any agent, run locally on the same definition.')
  .option('--state-dir <dir>', 'where the local ledger, the simulated world and the logs live', DEFAULT_STATE_DIR)
  .option('--stack <name>', 'work on a deployed stack (found by its CloudFormation outputs, with your AWS credentials) instead of the local state directory')
  .option('--region <region>', 'the deployed stack\'s region (default: your AWS configuration\'s)')
  .version(packageVersion(), '--version', "savepoint's version")
  // A mistake in the command line is a usage error: exit 2, as for invalid input (cli/savepoint.ts),
  // with a hint instead of the whole help. The subcommands inherit both.
  .exitOverride()
  .showHelpAfterError('(add --help for the usage)')
  // Which options the command took from environment variables: a message about one names the variable.
  .hook('preAction', (_, command) => noteEnvironmentOptions(command));

/**
 * Ends the process now, with its process.exitCode, once each stream has written what it was given
 * (a write to a pipe may finish later: macOS). For a command with nothing left to run when it is
 * done (`replay`): its process would end anyway, but first V8 finishes the garbage collection it
 * began during the command, over a heap the exit frees — ~25 ms of `savepoint replay`'s CPU
 * (issue 38).
 */
export async function exitWhenWritten(streams: readonly NodeJS.WritableStream[] = [process.stdout, process.stderr], exit: () => void = () => process.exit()): Promise<void> {
  // A write's callback runs after every write before it (also with an error: a closed pipe).
  await Promise.all(streams.map((stream) => new Promise<void>((written) => stream.write('', () => written()))));
  exit();
}

export const stateDir = () => resolve(program.opts<{ stateDir: string }>().stateDir);
export const deployed = () => program.opts<{ stack?: string; region?: string }>();

/** A command to type next, addressed as this one was (cli/command-hint.ts). */
export const nextCommand = (words: string): string => commandHint(words, program.opts());

/**
 * A run's report, as `run`, `resume`, `status` and `fork` print it. A failed run is not over (it
 * resumes where it stopped): its report ends with the command that resumes it, deciding approvals
 * as `approve` says (the `--approve` of the command that ran it, when it did).
 */
export function printReport(report: RunReport, execution?: ExecutionFigures, approve?: unknown): void {
  out(formatReport(report, execution));
  if (report.status === 'failed') out(`the run failed: once its cause is fixed, it resumes where it stopped: ${nextCommand(resumeWords(report.runId, approve))}`);
}

export const AGENT_HELP = 'the agent: a name (agents/<name>/agent.ts) or the path of its module (default: $SAVEPOINT_AGENT)';
export const defaultAgent = process.env['SAVEPOINT_AGENT'] || undefined;

/**
 * The version in savepoint's package.json: beside cli/ in the sources and the bundle, one level
 * further up from an installed package's dist/cli/.
 */
function packageVersion(): string {
  const file = [new URL('../package.json', import.meta.url), new URL('../../package.json', import.meta.url)].find((url) => existsSync(url))!;
  return (JSON.parse(readFileSync(file, 'utf8')) as { version: string }).version;
}
