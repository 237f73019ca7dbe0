import type { Command } from 'commander';
import { CircuitBreaker, modelBreaker, toolsBreaker } from '../../lambdas/guards/breaker.js';
import { systemClock } from '../../lambdas/shared/ports.js';
import { formatBreaker } from '../format.js';
import { out, printJson } from '../program.js';
import { agentFor, withClient } from '../target.js';

/** `savepoint breakers`: the circuit breakers shared by all runs. */
export function registerBreakersCommand(program: Command): void {
  program
    .command('breakers')
    .description("the circuit breakers shared by all runs: each model the runs call, each agent's tools")
    .option('--agent <name|path>', "also this agent's breakers (its model, its fallback model, its tools), before any run of it (default: the running engine's agent)")
    .option('--json', 'print JSON', false)
    .action(async (options: { json: boolean; agent?: string }) => {
      const agent = await agentFor(options.agent);
      await withClient('breakers', options.agent, undefined, async ({ ledger }) => {
        const breaker = new CircuitBreaker(ledger, systemClock);
        // The breakers the runs in the ledger use (a model's, their agent's tools'), and the named agent's.
        const runs = await ledger.listRuns(1_000, { onDamaged: () => {} });
        const models = [...(agent ? [agent.model, ...(agent.fallbackModel ? [agent.fallbackModel] : [])] : []), ...runs.map((run) => run.model)];
        const agents = [...(agent ? [agent.name] : []), ...runs.map((run) => run.agent)];
        const names = [...new Set([...models.map(modelBreaker), ...agents.map((name) => toolsBreaker({ name }))])];
        const states = await Promise.all(names.map((name) => breaker.state(name)));
        if (options.json) printJson({ breakers: states });
        else out(states.length === 0 ? 'no breakers yet: no run in the ledger, and no --agent' : states.map(formatBreaker).join('\n'));
      });
    });
}
