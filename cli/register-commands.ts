import type { Command } from 'commander';
import { registerConsoleCommand } from './console.js';

/**
 * The commands, one module each (cli/commands/), in the order `savepoint --help` lists them, by the
 * names they register (test/cli/register-commands.test.ts holds the two to each other): each the
 * loader of its module's register function. A command line that names one loads that module alone:
 * the others' code (their option parsers, their zod schemas: ~90 built at every start, and their
 * own imports) is no part of another command's start (`savepoint replay` 115 -> 113 ms of CPU and
 * `status` 96 -> 92.5, alternated: issue 38).
 */
export const COMMANDS: Readonly<Record<string, () => Promise<(program: Command) => void>>> = {
  run: () => import('./commands/run.js').then((module) => module.registerRunCommand),
  serve: () => import('./commands/serve.js').then((module) => module.registerServeCommand),
  mcp: () => import('./commands/mcp.js').then((module) => module.registerMcpCommand),
  resume: () => import('./commands/resume.js').then((module) => module.registerResumeCommand),
  status: () => import('./commands/status.js').then((module) => module.registerStatusCommand),
  verify: () => import('./commands/verify.js').then((module) => module.registerVerifyCommand),
  trace: () => import('./commands/trace.js').then((module) => module.registerTraceCommand),
  approvals: () => import('./commands/approvals.js').then((module) => module.registerApprovalsCommand),
  // `approve` and `reject`, together.
  approve: () => import('./commands/decide.js').then((module) => module.registerDecideCommand),
  reject: () => import('./commands/decide.js').then((module) => module.registerDecideCommand),
  kill: () => import('./commands/kill.js').then((module) => module.registerKillCommand),
  migrate: () => import('./commands/migrate.js').then((module) => module.registerMigrateCommand),
  replay: () => import('./commands/replay.js').then((module) => module.registerReplayCommand),
  fork: () => import('./commands/fork.js').then((module) => module.registerForkCommand),
  runs: () => import('./commands/runs.js').then((module) => module.registerRunsCommand),
  batch: () => import('./commands/batch.js').then((module) => module.registerBatchCommand),
  breakers: () => import('./commands/breakers.js').then((module) => module.registerBreakersCommand),
  world: () => import('./commands/world.js').then((module) => module.registerWorldCommand),
  prune: () => import('./commands/prune.js').then((module) => module.registerPruneCommand),
  effects: () => import('./commands/effects.js').then((module) => module.registerEffectsCommand),
};

/**
 * Registers the command `named` (the command line's: cli/command-word.ts) alone when it is one of
 * them, else all of them; and `savepoint console` always, last: it adds `--console-port` to `run`
 * and `resume`. Commander parses a command line the same way with its command alone, and building
 * every other command's options and help cost each command ~4 ms of CPU (`savepoint replay`:
 * issue 38). Any other command line (no command, the root's help, a word that is none of them,
 * for which commander names the nearest) has them all.
 */
export async function registerCommands(program: Command, named: string | undefined, stateDir: () => string, io: { out: (line: string) => void; err: (line: string) => void }): Promise<void> {
  const alone = named !== undefined && Object.hasOwn(COMMANDS, named) ? [COMMANDS[named]!] : Object.values(COMMANDS);
  // Registered in COMMANDS' order once all are loaded (`approve` and `reject` share one).
  const registers = await Promise.all(alone.map((load) => load()));
  for (const register of new Set(registers)) register(program);
  registerConsoleCommand(program, stateDir, io);
}
