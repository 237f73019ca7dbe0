import { ArnFormat, Aws, CfnResource, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Policy, PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import {
  Choice,
  Condition,
  CsvHeaders,
  CustomState,
  DefinitionBody,
  DistributedMap,
  JsonPath,
  LogLevel,
  S3CsvItemReader,
  S3JsonItemReader,
  StateMachine,
  StateMachineType,
  Succeed,
  Wait,
  WaitTime,
  type IChainable,
  type IItemReader,
} from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { BATCH_STATE_MACHINE_METADATA, batchStates, BatchStates, type BatchSource } from '../lambdas/runs/batch.js';
import { LAMBDA_RETRY, RETRY, TASK_TIMEOUT_MARGIN, TIMEOUT_RETRY } from './agent-state-machine.js';

// The states' names are the batch's contract with the twin (local/runtime/batches.ts): lambdas/runs/batch.ts.
export { BatchStates, batchStates } from '../lambdas/runs/batch.js';

/** The item functions' timeout (infra/durable-agent.ts gives each agent's that): a start, or one read of a run. */
export const BATCH_ITEM_TIMEOUT = Duration.seconds(30);

/**
 * A batch as a Distributed Map over its runs (the runs API's `POST /v1/batches` starts it, named
 * by the batch id, with `{ batchId, agent, runs: [{ runId, input }], manifest?, itemFunction,
 * concurrency, pollSeconds, caller }`: lambdas/runs/batch.ts `BatchExecutionInput`):
 *
 *   ItemSource? ─ a manifest ─► ManifestFormat? ─ csv ─► Items (csv manifest)   (ItemReader: S3 getObject, CSV, first row the header)
 *        │                                └─ json ─► Items (json manifest)  (ItemReader: S3 getObject, a JSON array)
 *        └─ a list ─► Items (ItemsPath $.runs)
 *
 *   Each Map (DISTRIBUTED, MaxConcurrency from $.concurrency), per item, a child execution:
 *     StartItemRun ─► ItemEnded? ─► ItemDone
 *                        ▲   │ not yet
 *        CheckItemRun ◄──┴── WaitForItemRun ($.pollSeconds)
 *
 * StartItemRun starts the run through the runs API's own start path (idempotent on its run id:
 * a batch started again — a redrive, a retried Task, a twin restarted — finds the run and starts
 * nothing); a manifest's item names its run there (`<batchId>-<index>`, or its `key` field's
 * value). CheckItemRun reads the run's status from the ledger. Both invoke the function the
 * execution names (`itemFunction`: the agent's own, with its code), so one state machine serves
 * every agent of a stack, its role invoking only their item functions. Why poll and not `.sync:2`
 * or a task token: a run's end is a ledger record, read with one GetItem per poll and no
 * control-plane call (the runs may be hand-offs, several executions each, which `.sync` on one
 * execution would not follow), and the child execution's wait is what bounds how many runs are
 * live at once.
 */
export function batchDefinition(scope: Construct): IChainable {
  const maps = Object.fromEntries((['items', 'json', 'csv'] as const).map((source) => [source, itemsMap(scope, source)])) as Record<BatchSource, DistributedMap>;
  const format = new Choice(scope, BatchStates.ManifestFormat, { stateName: BatchStates.ManifestFormat }).when(Condition.stringEquals('$.manifest.format', 'csv'), maps.csv).otherwise(maps.json);
  return new Choice(scope, BatchStates.ItemSource, { stateName: BatchStates.ItemSource }).when(Condition.isPresent('$.manifest'), format).otherwise(maps.items);
}

/** One source's Map and its item processor. */
function itemsMap(scope: Construct, source: BatchSource): DistributedMap {
  const names = batchStates(source);
  const timeout = BATCH_ITEM_TIMEOUT.plus(TASK_TIMEOUT_MARGIN).toSeconds();
  const task = (name: string, payload: Record<string, unknown>) => {
    // A CustomState: LambdaInvoke takes one function, and the function here is the execution's (`FunctionName.$`).
    const invoke = new CustomState(scope, name, {
      stateJson: {
        Type: 'Task',
        Resource: `arn:${Aws.PARTITION}:states:::lambda:invoke`,
        Parameters: { 'FunctionName.$': '$.itemFunction', Payload: { 'executionArn.$': '$$.Execution.Id', ...payload } },
        ResultSelector: { 'runId.$': '$.Payload.runId', 'status.$': '$.Payload.status', 'ended.$': '$.Payload.ended' },
        ResultPath: '$.run',
        TimeoutSeconds: timeout,
      },
    });
    invoke.addRetry(LAMBDA_RETRY);
    invoke.addRetry(TIMEOUT_RETRY);
    // A transient fault of the ledger or of Step Functions, as a step retries it; any other failure fails the item and the batch.
    invoke.addRetry(RETRY.transient);
    return invoke;
  };
  const common = { action: 'start', 'batchId.$': '$.batchId', 'agent.$': '$.agent', 'caller.$': '$.caller' };
  const start = task(names.StartItemRun, source === 'items' ? { ...common, 'runId.$': '$.runId', 'input.$': '$.input' } : { ...common, 'item.$': '$.item', 'index.$': '$.index', 'manifest.$': '$.manifest' });
  // After the start, the run's id is what it answered (a manifest's item is named by the item step).
  const check = task(names.CheckItemRun, { action: 'check', 'batchId.$': '$.batchId', 'agent.$': '$.agent', 'runId.$': '$.run.runId' });
  const wait = new Wait(scope, names.WaitForItemRun, { stateName: names.WaitForItemRun, time: WaitTime.secondsPath('$.pollSeconds') });
  // What an item answers: its run and where it ended, small, so that the batch's result stays small.
  const done = new Succeed(scope, names.ItemDone, { stateName: names.ItemDone, outputPath: '$.run' });
  const ended = new Choice(scope, names.ItemEnded, { stateName: names.ItemEnded }).when(Condition.booleanEquals('$.run.ended', true), done).otherwise(wait.next(check));
  check.next(ended);
  const shared = { 'batchId.$': '$.batchId', 'agent.$': '$.agent', 'pollSeconds.$': '$.pollSeconds', 'caller.$': '$.caller', 'itemFunction.$': '$.itemFunction' };
  const itemReader: IItemReader | undefined =
    source === 'items'
      ? undefined
      : source === 'csv'
        ? new S3CsvItemReader({ bucketNamePath: JsonPath.stringAt('$.manifest.bucket'), key: JsonPath.stringAt('$.manifest.key'), csvHeaders: CsvHeaders.useFirstRow() })
        : new S3JsonItemReader({ bucketNamePath: JsonPath.stringAt('$.manifest.bucket'), key: JsonPath.stringAt('$.manifest.key') });
  const items = new DistributedMap(scope, names.Items, {
    stateName: names.Items,
    ...(itemReader ? { itemReader } : { itemsPath: '$.runs' }),
    maxConcurrencyPath: '$.concurrency',
    itemSelector:
      source === 'items'
        ? { ...shared, 'runId.$': '$$.Map.Item.Value.runId', 'input.$': '$$.Map.Item.Value.input' }
        : { ...shared, 'manifest.$': '$.manifest', 'item.$': '$$.Map.Item.Value', 'index.$': '$$.Map.Item.Index' },
    mapExecutionType: StateMachineType.STANDARD,
    resultPath: JsonPath.DISCARD,
  });
  items.itemProcessor(start.next(ended));
  return items;
}

/** A batch state machine's name and limit (a stack's: ControlPlane `batches()`). */
export interface BatchStateMachineProps {
  /** The state machine's name (the runs functions are told its ARN, built from it). @default one CloudFormation makes */
  readonly stateMachineName?: string;
  /** The longest a batch may take, all its runs included. @default Duration.days(30) */
  readonly executionTimeout?: Duration;
}

/**
 * The batch state machine of a stack: one run per item, at most `concurrency` at once
 * (`batchDefinition`), for every agent whose item function it is allowed (`allowItemFunction`).
 * Its role has what AWS documents a Distributed Map needs ("IAM policies for using Distributed
 * Map states", https://docs.aws.amazon.com/step-functions/latest/dg/iam-policies-eg-dist-map.html):
 * `states:StartExecution` on itself (its child executions), `states:DescribeExecution` and
 * `states:StopExecution` on its own executions — CDK's DistributedMap grants them, a template test
 * holds them (test/infra/batch-state-machine.test.ts) — and `s3:GetObject` on each manifest
 * bucket granted (`allowManifests`), which the ItemReader's `s3:getObject` is made with.
 *
 * A stack makes it once, for its agents with `batches` (ControlPlane `batches()`); a DurableAgent
 * allows it its own item function.
 *
 * @example
 * ```ts
 * stack.addAgent('Invoices', { agentName: 'invoices', entry: './invoices.ts', batches: { manifestBuckets: [bucket] } });
 * ```
 */
export class BatchStateMachine extends Construct {
  /** The state machine (a Distributed Map over each batch's items: `batchDefinition`). */
  readonly stateMachine: StateMachine;
  /** Its ARN: built from its name when it has one, so that what is told it (a runs API) need not wait on it. */
  readonly stateMachineArn: string;
  readonly #executions: string;
  #invoke?: PolicyStatement;
  #manifests?: PolicyStatement;
  readonly #buckets = new Set<string>();

  constructor(scope: Construct, id: string, props: BatchStateMachineProps = {}) {
    super(scope, id);
    const logs = new LogGroup(this, 'Logs', { retention: RetentionDays.ONE_MONTH, removalPolicy: RemovalPolicy.DESTROY });
    this.stateMachine = new StateMachine(this, 'StateMachine', {
      ...(props.stateMachineName !== undefined && { stateMachineName: props.stateMachineName }),
      stateMachineType: StateMachineType.STANDARD,
      definitionBody: DefinitionBody.fromChainable(batchDefinition(this)),
      timeout: props.executionTimeout ?? Duration.days(30),
      tracingEnabled: true,
      logs: { destination: logs, level: LogLevel.ERROR, includeExecutionData: false },
    });
    // Its child executions are named under it (`execution:<name>/<map run label>:<id>`), which the
    // `execution:<name>:*` CDK grants does not match: the statement AWS's Distributed Map example
    // policy names, as we read it (the page above), for DescribeExecution and StopExecution. A policy
    // of its own, as CDK's DistributedMapPolicy: the state machine waits on its default policy, which
    // must not name it.
    // Marked, so that the twin running the stack's template tells it from the agent's (local/template/asl.ts).
    (this.stateMachine.node.defaultChild as CfnResource).addMetadata(BATCH_STATE_MACHINE_METADATA, true);
    const stack = Stack.of(this);
    const name = props.stateMachineName ?? this.stateMachine.stateMachineName;
    this.stateMachineArn = props.stateMachineName === undefined ? this.stateMachine.stateMachineArn : stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: name, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    this.#executions = stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${name}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    const children = stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${name}/*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME });
    new Policy(this, 'ChildExecutionsPolicy', { roles: [this.stateMachine.role], statements: [new PolicyStatement({ actions: ['states:DescribeExecution', 'states:StopExecution'], resources: [children] })] });
  }

  /** A statement of the role whose resources grow with each agent (or bucket), added with its first: IAM refuses one with none. */
  #statement(actions: string[], resources: string[], kind: 'invoke' | 'manifests'): void {
    let statement = kind === 'invoke' ? this.#invoke : this.#manifests;
    if (!statement) {
      statement = new PolicyStatement({ actions });
      this.stateMachine.addToRolePolicy(statement);
      if (kind === 'invoke') this.#invoke = statement;
      else this.#manifests = statement;
    }
    statement.addResources(...resources);
  }

  /** Lets the batches invoke `itemFunction` (an agent's: its runs are started only through it), and its versions. */
  allowItemFunction(itemFunction: IFunction): void {
    this.#statement(['lambda:InvokeFunction'], [itemFunction.functionArn, `${itemFunction.functionArn}:*`], 'invoke');
  }

  /** Lets the batches read their items from objects of `bucket` (the ItemReader's GetObject). */
  allowManifests(bucket: IBucket): void {
    if (this.#buckets.has(bucket.node.path)) return;
    this.#buckets.add(bucket.node.path);
    this.#statement(['s3:GetObject'], [bucket.arnForObjects('*')], 'manifests');
  }

  /** Lets `grantee` start batches (an execution named by the batch id) and read them back (DescribeExecution). */
  grantStartBatch(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['states:StartExecution'], resources: [this.stateMachineArn] }));
    grantee.grantPrincipal.addToPrincipalPolicy(new PolicyStatement({ actions: ['states:DescribeExecution'], resources: [this.#executions] }));
  }
}
