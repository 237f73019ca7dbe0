import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { UsageError } from '../errors.js';
import { ownStateDir } from '../owner.js';
import { AGENT_HELP, defaultAgent, err, out, printJson, stateDir } from '../program.js';
import { agentHomeOf, kindToOpen, rememberedAgents, runningEngine, worldDataOf } from '../state.js';
import { agentFor, recordedAgent } from '../target.js';

/** `savepoint world`: what the agent's simulated world holds. */
export function registerWorldCommand(program: Command): void {
  program
    .command('world')
    .description("what the agent's simulated world holds (e.g. the refunds the simulated provider paid)")
    .option('--agent <name|path>', AGENT_HELP, defaultAgent)
    .option('--world-data <file>', 'as for run')
    .option('--json', 'print JSON', false)
    .action(async (options: { json: boolean; agent?: string; worldData?: string }) => {
      const engine = await runningEngine(stateDir());
      // Said without its endpoints: each carries a credential of the engine (engine.json is its owner's alone).
      if (engine) throw new UsageError(`an engine (pid ${engine.pid}) owns ${stateDir()} and its world while it runs; ask again when it stops`);
      // Without --agent, the one agent that ran here (its world is the one this directory holds).
      const ran = rememberedAgents(stateDir());
      const agent = await agentFor(options.agent ?? (ran.length === 1 ? recordedAgent(stateDir(), ran[0]!) : undefined), undefined, null);
      if (!agent) throw new UsageError(`name the agent whose world to show: --agent <name|path> (or $SAVEPOINT_AGENT)${ran.length > 1 ? `; ${stateDir()} holds runs of ${ran.join(', ')}` : ''}`);
      if (!agent.dev?.world) throw new UsageError(`agent ${agent.name} has no simulated world`);
      // An agent that never ran here has no world here: opening one would only make its journals (a
      // read command that changed the directory). A directory that names none (made before agents.json) is read as before.
      if (ran.length > 0 && !ran.includes(agent.name)) throw new UsageError(`agent ${agent.name} never ran in ${stateDir()}, so its world there is empty; it holds runs of ${ran.join(', ')}: name one of them with --agent, or pass --state-dir`);
      // Reading the world makes no state directory; while it is open, this process owns the directory.
      // A `--memory` run keeps its world in its own process: nothing is left here to read (docs/cli.md, Try it with failures).
      if (!existsSync(stateDir())) throw new UsageError(`no state directory ${stateDir()}: run \`savepoint run\` first, without --memory (a --memory run keeps nothing to show), or pass --state-dir`);
      // `serve` of several agents keeps each agent's world after the first beside its ledger, in agents/<name>/:
      // read at the top, it is an empty world of the agent (and a new journal left there).
      const dir = agentHomeOf(stateDir(), agent.name);
      // Nothing ran in a directory without a ledger: opening its world there would only make its journals.
      // One whose ledger was deleted (its head or seal key left) did run: its world is still there to show.
      if (!kindToOpen(dir)) throw new UsageError(`no ledger in ${dir}: nothing ran there, so its world is empty; run \`savepoint run\` first, or pass --state-dir`);
      const ownership = await ownStateDir(dir, 'world');
      const world = await agent.dev
        .world({ stateDir: dir, dataFile: worldDataOf(dir, options.worldData).path, failRate: 0, seed: 1, now: () => new Date() })
        .catch(async (error: unknown) => {
          await ownership.release();
          throw error;
        });
      for (const note of world.notes ?? []) err(`savepoint: warning: ${note}`);
      try {
        const seen = (await world.inspect?.()) ?? { lines: ['(this world shows nothing)'], json: {} };
        if (options.json) printJson(seen.json);
        else out(seen.lines.join('\n'));
      } finally {
        await world.close();
        await ownership.release();
      }
    });
}
