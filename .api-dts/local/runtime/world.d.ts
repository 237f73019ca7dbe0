import type { AgentDefinition, DevWorld, LedgerFacts } from '../../lambdas/define.js';
import type { Clock } from '../../lambdas/shared/ports.js';
import type { LocalStackOptions } from './options.js';
/** The agent's simulated world, or an empty one for an agent that needs none. */
export declare function startWorld<World extends DevWorld>(agent: AgentDefinition<any, any, World>, options: LocalStackOptions<World>, clock: Clock, ledger?: LedgerFacts): Promise<World>;
