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
    .description('the circuit breakers shared by all runs (the model provider, each agent\'s tools)')
    .option('--agent <name|path>', 'also show this agent\'s tools breaker (default: the running engine\'s agent)')
    .option('--json', 'print JSON', false)
    .action(async (options: { json: boolean; agent?: string }) => {
      const agent = await agentFor(options.agent);
      await withClient('breakers', options.agent, undefined, async ({ ledger }) => {
        const breaker = new CircuitBreaker(ledger, systemClock);
        const models = agent ? [agent.model, ...(agent.fallbackModel ? [agent.fallbackModel] : [])] : [];
        const names = [...models.map(modelBreaker), ...(agent ? [toolsBreaker(agent)] : [])];
        const states = await Promise.all(names.map((name) => breaker.state(name)));
        if (options.json) printJson({ breakers: states });
        else out(states.map(formatBreaker).join('\n'));
      });
    });
}
