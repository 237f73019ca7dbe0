import { InvalidInputError } from '../shared/errors.js';
import type { ExecutionStarter } from '../steps/recover-run.js';
import type { ChildStarter } from '../tools/child-runs.js';

/**
 * Starts child runs on the state machines a deployment names for its child agents (agent name →
 * alias ARN): an execution of the same name is the same child (sfnStarter answers an existing one
 * as started). An agent not named is refused, never started elsewhere.
 */
export function childStarter(machines: Readonly<Record<string, string>>, starterOf: (stateMachineArn: string) => ExecutionStarter): ChildStarter {
  return {
    start: async (agent, name, input) => {
      const arn = machines[agent];
      if (!arn) throw new InvalidInputError(`agent: ${agent} is not a child agent of this deployment (DurableAgentProps.children names ${Object.keys(machines).join(', ') || 'none'})`);
      await starterOf(arn).start(name, input);
    },
  };
}
