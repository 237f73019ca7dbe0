import { ArnFormat, Duration, Lazy, Stack } from 'aws-cdk-lib';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import type { Construct } from 'constructs';
import { Steps } from '../lambdas/shared/steps.js';
import type { LedgerTable } from './ledger-table.js';
import { EVERY_AGENT_STEPS, SHARED_STEPS, StepFunction } from './step-function.js';
import { topLevelStack } from './top-level-stack.js';

/** What the stack's recovery needs of an agent it serves. */
export interface RecoveredAgent {
  readonly agentName: string;
  /** The agent's module: bundled into ExecutionStopped, which kills a stopped run's child runs with it (it knows the agent's agent tools). */
  readonly entry: string;
  /** The agent state machine's ARNs, built from its fixed name. */
  readonly stateMachine: { readonly stateMachine: string };
  /** Recoveries in a row without progress before its runs are given up (DurableAgent's `maxRecoveries`). */
  readonly maxRecoveries: number;
  /** Whether its runs are traced: a run's end then reads its conversation (`traceRunEnd`). */
  readonly traced: boolean;
  /** The state machines of the agents it runs as tools (DurableAgent's `children`): their ends wake its waits. */
  readonly childMachines: readonly string[];
}

/** The bound `maxRecoveries` may take. */
export function checkMaxRecoveries(maxRecoveries: number, prop = 'maxRecoveries'): number {
  if (!Number.isInteger(maxRecoveries) || maxRecoveries < 1 || maxRecoveries > 20) {
    throw new Error(`${prop} must be an integer from 1 to 20, got ${maxRecoveries}`);
  }
  return maxRecoveries;
}

/**
 * Recovery without an operator, and StopExecution as a kill, once per stack's ledger (issue 34: a
 * shared control plane): one EventBridge rule on the "Execution Status Change" of the stack's
 * agents' state machines sends FAILED and TIMED_OUT executions to RecoverRun, which resumes the run
 * with a new execution of the same run id (lambdas/steps/recover-run.ts), bounded by each agent's
 * `maxRecoveries`; another sends ABORTED ones to ExecutionStopped, which marks the run killed.
 *
 * The rules match the state machines by the prefix of their ARN (`…:stateMachine:<stack>-`, which
 * every agent's name starts with), not by listing each: an event pattern holds 2,048 characters by
 * default (EventBridge quotas, "Event pattern size"), which twenty agents' ARNs would pass. Prefix
 * matching of a string value is documented in "Content filtering in Amazon EventBridge event
 * patterns" (https://docs.aws.amazon.com/eventbridge/latest/userguide/content-filtering-with-event-patterns.html);
 * the twin evaluates both (local/aws/event-bus.ts). A state machine of another stack whose name
 * shares the prefix reaches the functions too: they find no run of theirs for it (a run's sealed
 * record must name the execution), and their roles name only this stack's agents.
 *
 * Neither function loads an agent's code: the run is the one the execution's input names, or the
 * one StartRun noted under the execution (lambdas/runs/status-change.ts); the version a run is
 * resumed on is the event's (`stateMachineVersionArn`). Neither calls DescribeExecution nor
 * GetExecutionHistory. Each role is granted, by ARN, what it does on each agent's state machine as
 * agents are added (`serve`), as the sweeper's is (infra/control-plane.ts).
 */
export class SharedRecovery {
  readonly recoverRun: StepFunction;
  readonly executionStopped: StepFunction;
  readonly #bounds: Record<string, number> = {};
  readonly #start = new PolicyStatement({ actions: ['states:StartExecution'] });
  readonly #taskResponse = new PolicyStatement({ actions: ['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat'] });
  #traced = false;
  #childRuns?: Rule;
  readonly #entries: string[] = [];

  constructor(
    readonly scope: Construct,
    readonly ledger: LedgerTable,
    readonly shared: { logGroup: ILogGroup; service: string; failedEvents: IQueue; deadLetters: IQueue },
  ) {
    const fn = (id: string, step: typeof Steps.RecoverRun | typeof Steps.ExecutionStopped, environment: Record<string, string> = {}, agentEntries?: () => readonly string[]) =>
      new StepFunction(scope, id, { step, bundledWith: agentEntries ? EVERY_AGENT_STEPS : SHARED_STEPS, logGroup: shared.logGroup, environment: { POWERTOOLS_SERVICE_NAME: shared.service, ...environment }, ...(agentEntries && { agentEntries }) });
    // Each agent's bound, by name (a few bytes an agent, within Lambda's 4 KB).
    this.recoverRun = fn('RecoveryFunction', Steps.RecoverRun, { RECOVERY_BOUNDS: Lazy.string({ produce: () => JSON.stringify(this.#bounds) }) });
    // Every agent's code in its bundle (as the stack's API functions have it, infra/stack-api.ts): a
    // run stopped with StopExecution takes its child runs with it, found by its agent's agent tools.
    this.executionStopped = fn('ExecutionStoppedFunction', Steps.ExecutionStopped, {}, () => this.#entries);
    ledger.grantTo(this.recoverRun, 'recoverRun');
    ledger.grantTo(this.executionStopped, 'executionStopped');
    for (const f of [this.recoverRun, this.executionStopped]) ledger.grantExecutionRuns(f, 'read');
    // A run is resumed on the version its ended execution ran, else on its alias: both authorized
    // on the state machine's own ARN (Step Functions, "Authorization for versions and aliases").
    this.recoverRun.addToRolePolicy(this.#start);

    const stack = Stack.of(scope);
    const agents = stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: `${topLevelStack(scope).stackName}-`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    const statusOf = (status: string[]) => ({
      source: ['aws.states'],
      detailType: ['Step Functions Execution Status Change'],
      detail: { status, stateMachineArn: [{ prefix: agents }] },
    });
    new Rule(scope, 'RecoveryRule', {
      description: 'Resumes a run whose execution failed or timed out (every agent of the stack), with a new execution of the same run id.',
      eventPattern: statusOf(['FAILED', 'TIMED_OUT']),
      // EventBridge retries a failed recovery (the step is idempotent per ended execution); what
      // still fails lands in the dead-letter queue rather than vanishing.
      targets: [new LambdaFunction(this.recoverRun, { retryAttempts: 4, maxEventAge: Duration.hours(6), deadLetterQueue: shared.deadLetters })],
    });
    // StopExecution is a kill switch too: the run record learns who stopped it and when.
    new Rule(scope, 'ExecutionAbortedRule', {
      description: 'Marks a run killed when its execution is stopped with StopExecution (every agent of the stack).',
      eventPattern: statusOf(['ABORTED']),
      targets: [new LambdaFunction(this.executionStopped, { retryAttempts: 4, deadLetterQueue: shared.failedEvents })],
    });
  }

  /** Adds `agent`'s state machine to what the roles may act on, and its bound to RecoverRun's. */
  serve(agent: RecoveredAgent): void {
    this.#bounds[agent.agentName] = checkMaxRecoveries(agent.maxRecoveries);
    this.#entries.push(agent.entry);
    this.#start.addResources(agent.stateMachine.stateMachine);
    if (agent.childMachines.length > 0) this.#wakeParents(agent);
    // A run's end exports its budget checks, rebuilt from its conversation (a query): only when traced.
    if (agent.traced && !this.#traced) {
      this.#traced = true;
      for (const f of [this.recoverRun, this.executionStopped]) this.ledger.grantRole(f, 'traceRunEnd');
    }
  }

  /**
   * A child run's end wakes its parent's wait (`defineAgentTool`): SendTaskSuccess on the parent's
   * token, read from its wait. One rule for the stack, on every parent's children's state machines
   * (listed: a child's every ending is heard, so a prefix would send each agent's every success).
   */
  #wakeParents(agent: RecoveredAgent): void {
    this.#taskResponse.addResources(agent.stateMachine.stateMachine);
    const pattern = { source: ['aws.states'], detailType: ['Step Functions Execution Status Change'], detail: { status: ['SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED'], stateMachineArn: [...agent.childMachines] } };
    if (this.#childRuns) {
      this.#childRuns.addEventPattern(pattern); // arrays merge: the children of each parent
      return;
    }
    this.executionStopped.addToRolePolicy(this.#taskResponse);
    this.ledger.grantChildWaits(this.executionStopped, 'read');
    this.#childRuns = new Rule(this.scope, 'ChildRunsEnded', {
      description: 'Wakes the waits of the stack\'s agents\' tool calls when their child runs\' executions end.',
      eventPattern: pattern,
      targets: [new LambdaFunction(this.executionStopped, { retryAttempts: 4, deadLetterQueue: this.shared.failedEvents })],
    });
  }
}
