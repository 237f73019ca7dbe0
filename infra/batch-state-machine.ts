import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { Function as LambdaFunction, type IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import {
  Choice,
  Condition,
  DefinitionBody,
  DistributedMap,
  JsonPath,
  LogLevel,
  StateMachine,
  StateMachineType,
  Succeed,
  TaskInput,
  Timeout,
  Wait,
  WaitTime,
  type IChainable,
} from 'aws-cdk-lib/aws-stepfunctions';
import { LambdaInvoke } from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { Construct } from 'constructs';
import { BatchStates } from '../lambdas/runs/batch.js';
import { LAMBDA_RETRY, RETRY, TASK_TIMEOUT_MARGIN, TIMEOUT_RETRY } from './agent-state-machine.js';

// The states' names are the batch's contract with the twin (local/runtime/batches.ts): lambdas/runs/batch.ts.
export { BatchStates } from '../lambdas/runs/batch.js';

/** The item function's timeout when it is not a function of this app (an imported one): what Lambda allows at most. */
const ITEM_TASK_TIMEOUT = Duration.minutes(1);

/**
 * A batch as a Distributed Map over its runs (the runs API's `POST /v1/batches` starts it, named
 * by the batch id, with `{ batchId, agent, runs: [{ runId, input }], concurrency, pollSeconds, caller }`:
 * lambdas/runs/batch.ts `BatchExecutionInput`):
 *
 *   Items (Map, DISTRIBUTED, MaxConcurrency from $.concurrency), per run, a child execution:
 *     StartItemRun ─► ItemEnded? ─► ItemDone
 *                        ▲   │ not yet
 *        CheckItemRun ◄──┴── WaitForItemRun ($.pollSeconds)
 *
 * StartItemRun starts the run through the runs API's own start path (idempotent on its run id:
 * a batch started again — a redrive, a retried Task, a twin restarted — finds the run and starts
 * nothing); CheckItemRun reads the run's status from the ledger. Why poll and not `.sync:2` or a
 * task token: a run's end is a ledger record, read with one GetItem per poll and no control-plane
 * call (the runs may be hand-offs, several executions each, which `.sync` on one execution would
 * not follow), and the child execution's wait is what bounds how many runs are live at once.
 */
export function batchDefinition(scope: Construct, itemFunction: IFunction): IChainable {
  const fn = itemFunction instanceof LambdaFunction ? itemFunction.currentVersion : itemFunction;
  const timeout = ((itemFunction instanceof LambdaFunction && itemFunction.timeout) || ITEM_TASK_TIMEOUT).plus(TASK_TIMEOUT_MARGIN);
  const task = (name: string, payload: Record<string, unknown>) => {
    const invoke = new LambdaInvoke(scope, name, {
      stateName: name,
      lambdaFunction: fn,
      payload: TaskInput.fromObject({ executionArn: JsonPath.executionId, ...payload }),
      resultSelector: { 'runId.$': '$.Payload.runId', 'status.$': '$.Payload.status', 'ended.$': '$.Payload.ended' },
      resultPath: '$.run',
      taskTimeout: Timeout.duration(timeout),
      retryOnServiceExceptions: false,
    });
    invoke.addRetry(LAMBDA_RETRY);
    invoke.addRetry(TIMEOUT_RETRY);
    // A transient fault of the ledger or of Step Functions, as a step retries it; any other failure fails the item and the batch.
    invoke.addRetry(RETRY.transient);
    return invoke;
  };
  const start = task(BatchStates.StartItemRun, { action: 'start', 'batchId.$': '$.batchId', 'agent.$': '$.agent', 'runId.$': '$.runId', 'input.$': '$.input', 'caller.$': '$.caller' });
  const check = task(BatchStates.CheckItemRun, { action: 'check', 'batchId.$': '$.batchId', 'agent.$': '$.agent', 'runId.$': '$.runId' });
  const wait = new Wait(scope, BatchStates.WaitForItemRun, { stateName: BatchStates.WaitForItemRun, time: WaitTime.secondsPath('$.pollSeconds') });
  // What an item answers: its run and where it ended, small, so that the batch's result stays small.
  const done = new Succeed(scope, BatchStates.ItemDone, { stateName: BatchStates.ItemDone, outputPath: '$.run' });
  const ended = new Choice(scope, BatchStates.ItemEnded, { stateName: BatchStates.ItemEnded }).when(Condition.booleanEquals('$.run.ended', true), done).otherwise(wait.next(check));
  check.next(ended);
  const items = new DistributedMap(scope, BatchStates.Items, {
    stateName: BatchStates.Items,
    itemsPath: '$.runs',
    maxConcurrencyPath: '$.concurrency',
    itemSelector: {
      'batchId.$': '$.batchId',
      'agent.$': '$.agent',
      'pollSeconds.$': '$.pollSeconds',
      'caller.$': '$.caller',
      'runId.$': '$$.Map.Item.Value.runId',
      'input.$': '$$.Map.Item.Value.input',
    },
    mapExecutionType: StateMachineType.STANDARD,
    resultPath: JsonPath.DISCARD,
  });
  items.itemProcessor(start.next(ended));
  return items;
}

export interface BatchStateMachineProps {
  /** The function of StartItemRun and CheckItemRun (lambdas/runs/batch.ts `createBatchItem`). */
  readonly itemFunction: IFunction;
  /** The state machine's name. @default one CloudFormation makes */
  readonly stateMachineName?: string;
  /** The longest a batch may take, all its runs included. @default Duration.days(30) */
  readonly executionTimeout?: Duration;
}

/**
 * The batch state machine of an agent: one run per item, at most `concurrency` at once
 * (`batchDefinition`). Its role may start its own child executions, as a Distributed Map needs
 * (CDK's DistributedMap grants it), and invoke the item function.
 */
export class BatchStateMachine extends Construct {
  readonly stateMachine: StateMachine;

  constructor(scope: Construct, id: string, props: BatchStateMachineProps) {
    super(scope, id);
    const logs = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      ...(props.stateMachineName !== undefined && { stateMachineName: props.stateMachineName }),
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromChainable(batchDefinition(this, props.itemFunction)),
      timeout: props.executionTimeout ?? Duration.days(30),
      tracingEnabled: true,
      logs: { destination: logs, level: LogLevel.ERROR, includeExecutionData: false },
    });
  }
}
