import { join } from 'node:path';
import { approvalApiDecider, createClient } from '../client/index.js';
import type { LocalStack } from '../local/runtime/local-stack.js';
import { historySource } from './history.js';
import { startConsole, type ConsoleOptions, type ConsoleServer } from './server.js';

/**
 * The console of a running local stack, in its process: it reads the stack's ledger and engine
 * (and the state directory's history log, for executions of earlier processes), and steers
 * through a client of the stack (decisions through the approval API, starts through the Step
 * Functions API).
 */
export function startLocalConsole(
  stack: Pick<LocalStack, 'agent' | 'engine' | 'ledger' | 'sfn' | 'stateMachineArn' | 'endpoints'>,
  options: { stateDir?: string } & Pick<ConsoleOptions, 'host' | 'port' | 'token' | 'log' | 'actor' | 'clock'> = {},
): Promise<ConsoleServer> {
  const client = createClient({
    ledger: stack.ledger,
    sfn: stack.sfn,
    stateMachineArn: stack.stateMachineArn,
    decide: approvalApiDecider(stack.endpoints.approvals),
    agent: stack.agent,
  });
  const { stateDir, ...rest } = options;
  return startConsole({
    ...rest,
    ledger: stack.ledger,
    client,
    history: historySource({ engine: stack.engine, ...(stateDir && { file: join(stateDir, 'history.jsonl') }) }),
    definition: () => stack.engine.definition,
    subscribe: (onChange) => stack.engine.on(() => onChange()),
    canStart: true,
    agent: stack.agent.name,
  });
}
