import type { AgentDefinition, DevWorld, LedgerFacts } from '../../lambdas/define.js';
import type { Clock } from '../../lambdas/shared/ports.js';
import type { LocalStackOptions } from './options.js';

/** The agent's simulated world, or an empty one for an agent that needs none. */
export async function startWorld<World extends DevWorld>(agent: AgentDefinition<any, any, World>, options: LocalStackOptions<World>, clock: Clock, ledger?: LedgerFacts): Promise<World> {
  if (!agent.dev?.world) return { env: {}, close: async () => undefined } as unknown as World;
  return agent.dev.world({
    stateDir: options.stateDir,
    dataFile: options.worldData,
    failRate: options.failRate ?? 0,
    seed: options.seed ?? 1,
    now: () => clock.now(),
    ...(ledger && { ledger }),
  });
}
