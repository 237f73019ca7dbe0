import { join } from 'node:path';
import { approvalApiDecider, createClient, type SavepointClient } from '../client/ledger-client.js';
import type { LocalStack } from '../local/runtime/local-stack.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import { agentLedgers } from '../local/state/agent-ledgers.js';
import { historySource, severalHistories } from './history.js';
import { startConsole, type ConsoleOptions, type ConsoleServer } from './server.js';

/** What the console reads and steers of a local stack. */
type ServedStack = Pick<LocalStack, 'agent' | 'engine' | 'ledger' | 'sfn' | 'stateMachineArn' | 'endpoints'> & Partial<Pick<LocalStack, 'childRuns'>>;

/**
 * The console of a running local stack, in its process: it reads the stack's ledger and engine
 * (and the state directory's history log, for executions of earlier processes), and steers
 * through a client of the stack (decisions through the approval API, starts through the Step
 * Functions API). With `agents` (`savepoint serve --agent a --agent b`: an engine and a ledger per
 * agent), it reads every agent's ledger and engine as one (local/state/agent-ledgers.ts), and
 * decides through `approvals` (serve's front door, which finds each approval's engine).
 */
export function startLocalConsole(
  stack: ServedStack,
  options: {
    stateDir?: string;
    /** The other agents the process serves, each with its stack and its state directory. */
    agents?: readonly { stack: ServedStack; stateDir: string }[];
    /** The approval API decisions go through. @default the stack's */
    approvals?: string;
  } & Pick<ConsoleOptions, 'host' | 'port' | 'token' | 'log' | 'actor' | 'clock'> = {},
): Promise<ConsoleServer> {
  const { stateDir, agents = [], approvals, ...rest } = options;
  const served = [{ stack, stateDir }, ...agents];
  const ledger = agents.length === 0 ? stack.ledger : agentLedgers(served.map((one) => ({ ledger: one.stack.ledger, agents: [one.stack.agent.name] })));
  const decide = approvalApiDecider(approvals ?? stack.endpoints.approvals);
  const clients = served.map((one) => createClient({ ledger, sfn: one.stack.sfn, stateMachineArn: one.stack.stateMachineArn, decide, agent: one.stack.agent, ...(one.stack.childRuns && { children: one.stack.childRuns }) }));
  const client = clients.length === 1 ? clients[0]! : runsOwnClient(ledger, served.map((one, index) => ({ agent: one.stack.agent.name, client: clients[index]! })));
  const histories = served.map((one) => historySource({ engine: one.stack.engine, ...(one.stateDir && { file: join(one.stateDir, 'history.jsonl') }) }));
  return startConsole({
    ...rest,
    ledger,
    client,
    history: histories.length === 1 ? histories[0]! : severalHistories(histories),
    // The definition of the run's agent's engine.
    definition: (run) => (served.find((one) => one.stack.agent.name === run.agent)?.stack ?? stack).engine.definition,
    subscribe: (onChange) => {
      const offs = served.map((one) => one.stack.engine.on(() => onChange()));
      return () => offs.forEach((off) => off());
    },
    canStart: true,
    agent: served.map((one) => one.stack.agent.name).join(', '),
  });
}

/**
 * One client over several agents' clients (serve with several agents): what names a run — its
 * report, a resume (`start` of its id), a fork of it, a kill, a migration — goes to the client of
 * the run's own agent, so it starts on that agent's engine and its report carries that agent's
 * summary; the rest (approvals, decisions, verify) to the first, whose ledger is every agent's.
 */
function runsOwnClient(ledger: Ledger, clients: readonly { agent: string; client: SavepointClient }[]): SavepointClient {
  const first = clients[0]!.client;
  const of = async (runId: string | undefined) => {
    const run = runId === undefined ? undefined : await ledger.getRun(runId);
    return clients.find((one) => one.agent === run?.agent)?.client ?? first;
  };
  return {
    ...first,
    start: async (request) => (await of(request.runId)).start(request),
    status: async (runId) => (await of(runId)).status(runId),
    wait: async (runId, options) => (await of(runId)).wait(runId, options),
    cancel: async (runId, options) => (await of(runId)).cancel(runId, options),
    migrate: async (runId, options) => (await of(runId)).migrate(runId, options),
    forkReport: async (runId, options) => (await of(runId)).forkReport(runId, options),
    fork: async (runId, options) => (await of(runId)).fork(runId, options),
    replay: async (runId, options) => (await of(runId)).replay(runId, options),
  };
}
