/** The CLI, loaded by its entry (cli/savepoint.ts) once zod's mode is set: every command, registered on the root command. */
import { CommanderError } from 'commander';
import { ErrorNames } from '../lambdas/shared/errors.js';
import { registerCommands } from './register-commands.js';
import { missingPeer, missingPeerMessage } from '../local/packages/optional-peers.js';
import { fileErrorMessage, UsageError } from './errors.js';
import { isRefusal } from '../client/runs-api-error.js';
import { examplesHelp } from './examples.js';
import { err, exitWhenWritten, out, program, stateDir } from './program.js';
import { StoppedBySignal } from './signals.js';
import { commandWord } from './command-word.js';
import { LockHeldError } from '../lambdas/ledger/lock-file.js';
import { ledgerInUse } from './state.js';

// The commands the command line names, or every one (cli/register-commands.ts).
await registerCommands(program, commandWord(process.argv), stateDir, { out, err });
// Each command's examples, last in its help (cli/examples.ts).
for (const command of program.commands) command.addHelpText('after', examplesHelp(command.name()));

// The commands that leave nothing running once they are done: their process ends then (exitWhenWritten).
// `replay` answers the agent's code from the ledger and closes the ledger before its action returns;
// `status`, `runs` and `approvals` ask the runs API, whose every request has closed the ledger it
// opened (and released the directory) before it answers (local/services/state-dir-api.ts), or a
// running engine's. Against a state directory of 150 runs the heap they read grew past V8's first
// full collection, which ran after their output, over a heap the exit frees (issue 38).
const ENDS_WHEN_DONE: ReadonlySet<string> = new Set(['replay', 'status', 'runs', 'approvals']);
program.hook('postAction', async (_, command) => {
  if (ENDS_WHEN_DONE.has(command.name())) await exitWhenWritten();
});

try {
  await program.parseAsync(process.argv);
} catch (error) {
  // Commander has said what is wrong with the command line (or printed the help or the version).
  if (error instanceof CommanderError) process.exitCode = error.exitCode === 0 ? 0 : 2;
  else {
    // Another process has the ledger open (a command reading it: a `run` started meanwhile), which it names.
    if (error instanceof LockHeldError) error = await ledgerInUse(error);
    // A runs API's refusal of bad input (4xx: client/connect.ts) is bad input too.
    const refused = isRefusal(error);
    const invalid = error instanceof UsageError || refused || (error instanceof Error && error.name === ErrorNames.InvalidInput);
    const { message, usage } = toldOf(error);
    err(`savepoint: ${message}`);
    process.exitCode = error instanceof StoppedBySignal ? error.exitCode : invalid || usage ? 2 : 1;
  }
}

/** What the user is told of a command's failure, and whether it is theirs to fix before anything is asked (exit 2). */
function toldOf(error: unknown): { message: string; usage: boolean } {
  // An optional peer the command loads and the project has not installed: which, and how to install it.
  const peer = missingPeer(error);
  if (peer) return { message: missingPeerMessage(peer), usage: false };
  if (!(error instanceof Error)) return { message: String(error), usage: false };
  // `--stack` without AWS credentials: the SDK's sentence, and what to do about it (nothing was asked of AWS).
  if (error.name === 'CredentialsProviderError') {
    return { message: `--stack: the AWS SDK found no credentials (${error.message}): sign in first (aws sso login, AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)`, usage: true };
  }
  // A file the command met damaged (a state directory's file replaced by a directory): which, and what was done to it.
  return { message: fileErrorMessage(error) ?? error.message, usage: false };
}

