import { InvalidInputError } from '../shared/errors.js';
import type { Executions } from '../shared/ports.js';
import type { ExecutionStarter } from '../steps/recover-run.js';
import type { ChildStarter } from '../tools/child-runs.js';

/**
 * Starts and stops child runs on the state machines a deployment names for its child agents (agent
 * name → alias ARN): an execution of the same name is the same child (sfnStarter answers an
 * existing one as started). An agent not named is refused, never started or stopped elsewhere (and
 * the role may touch only the named agents' state machines and executions: DurableAgent `children`).
 */
export function childStarter(machines: Readonly<Record<string, string>>, starterOf: (stateMachineArn: string) => ExecutionStarter, executions: Pick<Executions, 'stop'>): ChildStarter {
  const machineOf = (agent: string) => {
    const arn = machines[agent];
    if (!arn) throw new InvalidInputError(`agent: ${agent} is not a child agent of this deployment (DurableAgentProps.children names ${Object.keys(machines).join(', ') || 'none'})`);
    return arn;
  };
  return {
    start: async (agent, name, input) => {
      await starterOf(machineOf(agent)).start(name, input);
    },
    stop: async (agent, executionArn, cause) => {
      machineOf(agent);
      await executions.stop(executionArn, 'Savepoint.ParentKilled', cause);
    },
  };
}
