import type { Command } from 'commander';
import { registerApprovalsCommand } from './commands/approvals.js';
import { registerBatchCommand } from './commands/batch.js';
import { registerBreakersCommand } from './commands/breakers.js';
import { registerDecideCommand } from './commands/decide.js';
import { registerForkCommand } from './commands/fork.js';
import { registerKillCommand } from './commands/kill.js';
import { registerMcpCommand } from './commands/mcp.js';
import { registerMigrateCommand } from './commands/migrate.js';
import { registerPruneCommand } from './commands/prune.js';
import { registerReplayCommand } from './commands/replay.js';
import { registerResumeCommand } from './commands/resume.js';
import { registerRunCommand } from './commands/run.js';
import { registerRunsCommand } from './commands/runs.js';
import { registerServeCommand } from './commands/serve.js';
import { registerStatusCommand } from './commands/status.js';
import { registerTraceCommand } from './commands/trace.js';
import { registerVerifyCommand } from './commands/verify.js';
import { registerWorldCommand } from './commands/world.js';
import { registerConsoleCommand } from './console.js';

/**
 * The commands, one module each (cli/commands/), in the order `savepoint --help` lists them, by the
 * names they register (test/cli/register-commands.test.ts holds the two to each other).
 */
export const COMMANDS: Readonly<Record<string, (program: Command) => void>> = {
  run: registerRunCommand,
  serve: registerServeCommand,
  mcp: registerMcpCommand,
  resume: registerResumeCommand,
  status: registerStatusCommand,
  verify: registerVerifyCommand,
  trace: registerTraceCommand,
  approvals: registerApprovalsCommand,
  // `approve` and `reject`, together.
  approve: registerDecideCommand,
  reject: registerDecideCommand,
  kill: registerKillCommand,
  migrate: registerMigrateCommand,
  replay: registerReplayCommand,
  fork: registerForkCommand,
  runs: registerRunsCommand,
  batch: registerBatchCommand,
  breakers: registerBreakersCommand,
  world: registerWorldCommand,
  prune: registerPruneCommand,
};

/**
 * Registers the command `named` (the command line's: cli/command-word.ts) alone when it is one of
 * them, else all of them; and `savepoint console` always, last: it adds `--console-port` to `run`
 * and `resume`. Commander parses a command line the same way with its command alone, and building
 * every other command's options and help cost each command ~4 ms of CPU (`savepoint replay`:
 * issue 38). Any other command line (no command, the root's help, a word that is none of them,
 * for which commander names the nearest) has them all.
 */
export function registerCommands(program: Command, named: string | undefined, stateDir: () => string, io: { out: (line: string) => void; err: (line: string) => void }): void {
  const alone = named !== undefined && Object.hasOwn(COMMANDS, named) ? [COMMANDS[named]!] : Object.values(COMMANDS);
  for (const register of new Set(alone)) register(program);
  registerConsoleCommand(program, stateDir, io);
}
