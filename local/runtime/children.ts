import type { AgentDefinition, DevWorld } from '../../lambdas/define.js';
import { sfnExecutions, sfnStarter } from '../../lambdas/adapters/sfn.js';
import type { StorageLedger } from '../../lambdas/ledger/storage-ledger.js';
import type { Clock } from '../../lambdas/shared/ports.js';
import type { StepName } from '../../lambdas/shared/steps.js';
import type { ChildStarter } from '../../lambdas/tools/child-runs.js';
import type { TwinIam } from '../aws/iam/index.js';
import type { LocalStackOptions } from './options.js';

/** A child agent's stack, as the parent's sees it. */
export interface ChildStack {
  readonly engine: import('../engine/local-engine.js').LocalEngine;
  readonly stateMachineArn: string;
  /** The operator's Step Functions client of the child's engine (the real SDK, to its endpoint). */
  readonly sfn: import('@aws-sdk/client-sfn').SFNClient;
  /** The child's own child agents' stacks, by agent name. */
  readonly children: ReadonlyMap<string, ChildStack>;
  close(): Promise<void>;
}

/** The stacks of an agent's child agents, by agent name; `as(step)` reaches them as that step's function. */
export interface ChildStacks {
  readonly as?: (step: StepName) => ChildStarter;
  readonly stacks: ReadonlyMap<string, ChildStack>;
  close(): Promise<void>;
}

/**
 * The agents an agent runs as tools (`defineAgentTool`), on this machine: each a local stack of its
 * own — its template, its twin IAM, its engine and its world — on the parent's ledger, as a
 * deployment's agents share its table. The parent's CallTool starts a child as its role may on
 * AWS: the twin authorizes `states:StartExecution` on the child's state machine against the parent
 * template's CallTool role (DurableAgent's `children` grants it), then the child's engine starts it
 * on its `live` alias. `onStack` routes each child engine's status changes to the parent.
 *
 * A child's definition is the one its agent tool names, with its dev parts (`withDev`: its world
 * and scripted model) when it has them.
 */
/** `startLocalStack`, given by local-stack.ts (which imports this module). */
export async function startChildStacks<World extends DevWorld>(
  agent: AgentDefinition<any, any, World>,
  options: LocalStackOptions<World>,
  parent: { ledger: StorageLedger; clock: Clock; iam?: Pick<TwinIam, 'authorizeAs'>; startStack: (options: LocalStackOptions) => Promise<ChildStack> },
  onStack: (stack: ChildStack) => void,
): Promise<ChildStacks> {
  const definitions = new Map<string, AgentDefinition>();
  for (const tool of agent.tools) {
    if (tool.child && !definitions.has(tool.child.agent.name)) definitions.set(tool.child.agent.name, tool.child.agent as AgentDefinition);
  }
  if (definitions.size === 0 || options.childStacks === false) return { stacks: new Map(), close: async () => undefined };
  const stacks = new Map<string, ChildStack>();
  const close = async () => {
    for (const stack of [...stacks.values()].reverse()) await stack.close();
  };
  try {
    for (const [name, child] of definitions) {
      const stack = await parent.startStack({
        agent: child,
        sharedLedger: parent.ledger,
        clock: parent.clock,
        ...(options.stateDir !== undefined && { stateDir: options.stateDir }),
        ...pick(options, ['failRate', 'seed', 'retryDelayMs', 'breakerRetryDelayMs', 'leaseMs', 'crash', 'recovery', 'codeVersion', 'prices', 'retryAfterWaitMs', 'iam', 'log', 'durability', 'promptCaching', 'wrapModel', 'statusChangeDeliveries']),
        ...childFleetBudget(options.fleetBudget),
      });
      stacks.set(name, stack);
      onStack(stack);
    }
  } catch (error) {
    await close();
    throw error;
  }
  const stackOf = (name: string) => {
    const stack = stacks.get(name);
    if (!stack) throw new Error(`agent ${name} is not a child agent of ${agent.name}`);
    return stack;
  };
  return {
    // Each function reaches the children's state machines as its own role may on AWS (DurableAgent's
    // `children`: CallTool starts them; ExecutionStopped and the runs API stop their executions),
    // authorized against the machine's own ARN, then through the real SDK to the child's engine.
    as: (step) => ({
      start: async (name, executionName, input) => {
        const stack = stackOf(name);
        // A start on the alias is authorized against the machine's own ARN.
        parent.iam?.authorizeAs(step, { action: 'states:StartExecution', resource: stack.stateMachineArn });
        await sfnStarter(stack.sfn, `${stack.stateMachineArn}:live`).start(executionName, input);
      },
      stop: async (name, executionArn, cause) => {
        const stack = stackOf(name);
        parent.iam?.authorizeAs(step, { action: 'states:StopExecution', resource: executionArn });
        await sfnExecutions(stack.sfn).stop(executionArn, 'Savepoint.ParentKilled', cause);
      },
    }),
    stacks,
    close,
  };
}

/**
 * A child agent's share of the fleet budget: the stack's limits, which every agent of a stack shares
 * on AWS (`SavepointStackProps.fleetBudget`), so its runs lease from the same stack counter as the
 * parent's; not the agent's own limits, which on AWS each agent's construct sets for itself.
 */
function childFleetBudget(budget: LocalStackOptions['fleetBudget']): Pick<LocalStackOptions, 'fleetBudget'> {
  if (!budget?.stack) return {};
  const { agent: _own, ...shared } = budget;
  return { fleetBudget: shared };
}

function pick<T extends object, K extends keyof T>(value: T, keys: readonly K[]): Partial<Pick<T, K>> {
  return Object.fromEntries(keys.filter((key) => value[key] !== undefined).map((key) => [key, value[key]])) as Partial<Pick<T, K>>;
}
