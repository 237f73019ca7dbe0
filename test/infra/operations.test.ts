import { Match, Template } from 'aws-cdk-lib/assertions';
import { beforeAll, describe, expect, it } from 'vitest';
import { LAMBDA_SERVICE_ERRORS } from '../../infra/agent-state-machine.js';
import { assertionApp, exampleTemplate } from './example-template.js';
import { INDEX_PROJECTIONS, NON_TOKEN_PARTITIONS, partitionsOf, RUN_INDEX_PROJECTION } from '../../infra/ledger-table.js';
import { AlarmIds } from '../../infra/observability.js';
import { SavepointStack } from '../../infra/stack.js';
import { LedgerIndexes } from '../../lambdas/ledger/dynamodb-ledger.js';
import { METRICS_NAMESPACE, MetricNames } from '../../lambdas/shared/metrics.js';
import { Steps, type StepName } from '../../lambdas/shared/steps.js';
import { DOC_FILES } from '../readme/readme-text.js';
import { roleStatements } from '../support/role-policies.js';
import { deploy, physicalNames } from '../../local/aws/iam/deployment.js';
import { ledgerTableArn } from '../../local/aws/iam/dynamodb.js';
import { evaluatePolicies } from '../../local/aws/iam/policy.js';
import { stackRoles } from '../../local/aws/iam/roles.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';

type Retrier = { ErrorEquals: string[]; IntervalSeconds?: number; BackoffRate?: number; MaxAttempts?: number; MaxDelaySeconds?: number; JitterStrategy?: string };
type Statement = { Action: string | string[]; Resource: unknown; Effect: string; Condition?: Record<string, Record<string, unknown>> };

let template: Template;
let resources: Record<string, { Type: string; Properties: Record<string, any> }>;
let states: Record<string, { Type: string; Retry?: Retrier[]; Parameters?: Record<string, unknown> }>;

beforeAll(() => {
  template = exampleTemplate();
  resources = template.toJSON().Resources;
  const [machine] = Object.values(template.findResources('AWS::StepFunctions::StateMachine'));
  const parts = (machine!.Properties.DefinitionString as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
  states = JSON.parse(parts.map((part) => (typeof part === 'string' ? part : 'X')).join('')).States;
});

/** The logical id of the one function that runs `step`. */
function functionOf(step: StepName): string {
  const found = Object.keys(template.findResources('AWS::Lambda::Function', { Properties: { Environment: { Variables: { SAVEPOINT_STEP: step } } } }));
  expect(found, step).toHaveLength(1);
  return found[0]!;
}

/** Every statement granted to a function's role. */
function statementsOf(functionId: string): Statement[] {
  const role = (resources[functionId]!.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
  return roleStatements(template.toJSON().Resources, role) as Statement[];
}

const actions = (statements: Statement[], prefix: string) =>
  statements
    .flatMap((statement) => [statement.Action].flat())
    .filter((action) => action.startsWith(prefix))
    .sort();

const EVENT_DRIVEN = [Steps.RecoverRun, Steps.ExecutionStopped, Steps.ExpireApprovals, Steps.Sweep, Steps.PruneVersions] as const;
/** The steps the example stack deploys a function for: it has no `batches`, so no batch item function (test/infra/batches.test.ts has that one). */
const DEPLOYED_STEPS = Object.values(Steps).filter((step) => step !== Steps.BatchItem);

describe('retries of Lambda itself', () => {
  it('retries throttling and Lambda service errors with backoff and jitter on every Task state', () => {
    const tasks = Object.entries(states).filter(([, state]) => state.Type === 'Task');
    expect(tasks.length).toBeGreaterThanOrEqual(7);
    for (const [name, state] of tasks) {
      const retrier = state.Retry?.find((candidate) => candidate.ErrorEquals.includes('Lambda.TooManyRequestsException'));
      expect(retrier, name).toBeDefined();
      expect(retrier!.ErrorEquals, name).toEqual(expect.arrayContaining(['Lambda.TooManyRequestsException', 'Lambda.ServiceException', 'Lambda.AWSLambdaException', 'Lambda.SdkClientException']));
      expect(retrier, name).toMatchObject({ BackoffRate: 2, JitterStrategy: 'FULL' });
      expect(retrier!.MaxAttempts, name).toBeGreaterThanOrEqual(6);
      expect(retrier!.MaxDelaySeconds, name).toBeGreaterThan(0);
    }
    expect([...LAMBDA_SERVICE_ERRORS]).toContain('Lambda.TooManyRequestsException');
  });

  it('puts the execution on every Task payload, for the log lines', () => {
    for (const [name, state] of Object.entries(states)) {
      if (state.Type === 'Task') expect(state.Parameters, name).toMatchObject({ Payload: { 'executionArn.$': '$$.Execution.Id' } });
    }
  });
});

describe('lose nothing', () => {
  it('sends failed asynchronous invocations of every event-driven function to the failed-events queue', () => {
    const configs = Object.values(template.findResources('AWS::Lambda::EventInvokeConfig'));
    const protectedFunctions = configs.map((config) => (config.Properties.FunctionName as { Ref: string }).Ref).sort();
    expect(protectedFunctions).toEqual(EVENT_DRIVEN.map(functionOf).sort());
    for (const config of configs) {
      expect(config.Properties.DestinationConfig.OnFailure.Destination['Fn::GetAtt'][0]).toMatch(/FailedEventsQueue/);
      expect(config.Properties.MaximumRetryAttempts).toBe(2);
    }
  });

  it('keeps every queue encrypted, TLS-only, for 14 days, with an alarm on any message in it', () => {
    const queues = template.findResources('AWS::SQS::Queue');
    expect(Object.keys(queues).length).toBe(3);
    const alarms = Object.values(template.findResources('AWS::CloudWatch::Alarm'));
    for (const [id, queue] of Object.entries(queues)) {
      expect(queue.Properties, id).toMatchObject({ SqsManagedSseEnabled: true, MessageRetentionPeriod: 14 * 24 * 3600 });
      const depth = alarms.find((alarm) => alarm.Properties.MetricName === 'ApproximateNumberOfMessagesVisible' && JSON.stringify(alarm.Properties.Dimensions).includes(id));
      expect(depth, id).toBeDefined();
      expect(depth!.Properties).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', Statistic: 'Maximum' });
    }
    for (const id of Object.keys(queues)) {
      template.hasResourceProperties('AWS::SQS::QueuePolicy', {
        Queues: [{ Ref: id }],
        PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
      });
    }
  });

  it('gives every EventBridge rule target a dead-letter queue, for events it could not deliver', () => {
    for (const [id, rule] of Object.entries(template.findResources('AWS::Events::Rule'))) {
      for (const target of rule.Properties.Targets as { DeadLetterConfig?: unknown }[]) expect(target.DeadLetterConfig, id).toBeDefined();
    }
  });

  it('throttles the approval API stage', () => {
    template.hasResourceProperties('AWS::ApiGateway::Stage', {
      MethodSettings: Match.arrayWith([Match.objectLike({ ThrottlingRateLimit: 10, ThrottlingBurstLimit: 20 })]),
    });
  });

  it('runs the sweeper every 15 minutes, with the failed-events queue for undelivered events', () => {
    template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'rate(15 minutes)',
      Targets: [Match.objectLike({ Arn: { 'Fn::GetAtt': [functionOf(Steps.Sweep), 'Arn'] }, DeadLetterConfig: { Arn: { 'Fn::GetAtt': [Match.stringLikeRegexp('FailedEventsQueue'), 'Arn'] } } })],
    });
    const sweeper = resources[functionOf(Steps.Sweep)]!.Properties;
    // The stack's sweeper (infra/control-plane.ts): it resumes a run on its own execution's state machine, named by the run.
    expect(sweeper.Environment.Variables).toMatchObject({ MAX_RECOVERIES: '3', TABLE_NAME: expect.anything(), POWERTOOLS_SERVICE_NAME: 'Savepoint' });
    expect(sweeper.Environment.Variables.STATE_MACHINE_ARN).toBeUndefined();
  });

  it('lets the sweeper describe and start executions of its own state machine, and nothing else in Step Functions', () => {
    const statements = statementsOf(functionOf(Steps.Sweep));
    expect(actions(statements, 'states:')).toEqual(['states:DescribeExecution', 'states:StartExecution']);
    const describe = statements.find((statement) => statement.Action === 'states:DescribeExecution')!;
    expect(JSON.stringify(describe.Resource)).toContain(':execution:Savepoint-refund-reconciler:*');
  });
});

describe('least privilege on the ledger', () => {
  // Updates are whole sealed items put on the condition of the seal read (lambdas/ledger/seal.ts): GetItem and PutItem, no UpdateItem.
  const expected: Record<string, string[]> = {
    // PutItem twice: its records, and which run an execution drives where its input does not say (EXEC#);
    // GetItem and ConditionCheckItem on the items that say a run id was pruned (PRUNEDRUN#), which a new run's put checks absent.
    [Steps.StartRun]: ['dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:PutItem', 'dynamodb:Query'],
    [Steps.BudgetCheck]: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'],
    // ConditionCheckItem: a final answer's write checks the kill flag (lambdas/ledger/turn-seen.ts).
    [Steps.CallModel]: ['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'],
    [Steps.CallTool]: ['dynamodb:BatchGetItem', 'dynamodb:ConditionCheckItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'],
    [Steps.RequestApproval]: ['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'],
    [Steps.Finalize]: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'],
    [Steps.ApprovalCallback]: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:Query', 'dynamodb:Query'],
    // Query twice: the pending-approvals index, and the run it counts an expired approval's wait on (countWait).
    [Steps.ExpireApprovals]: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:Query'],
    // GetItem twice: the run's records, and which run an execution drives (EXEC#); Query twice: the
    // pending-approvals index (the approvals it closes), and a run's conversation (its child runs, to stop them).
    [Steps.ExecutionStopped]: ['dynamodb:GetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:Query'],
    // Query: a run given up, or judged for progress, with a turn open has that turn's calls read (lambdas/ledger/open-turn.ts).
    [Steps.RecoverRun]: ['dynamodb:GetItem', 'dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query'],
    [Steps.Sweep]: ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'dynamodb:Query', 'dynamodb:Query'],
  };

  it.each(Object.entries(expected))('grants %s only the DynamoDB actions its steps call', (step, granted) => {
    expect(actions(statementsOf(functionOf(step as StepName)), 'dynamodb:')).toEqual(granted.sort());
  });

  it('lets no function delete, batch-write, scan or use a wildcard action', () => {
    for (const step of DEPLOYED_STEPS) {
      const granted = statementsOf(functionOf(step)).flatMap((statement) => [statement.Action].flat());
      for (const action of granted) expect(action, step).not.toMatch(/\*|DeleteItem|BatchWriteItem|PartiQL|Scan/);
    }
  });

  it('gives the sweeper a query of the sparse running-runs index instead of a scan', () => {
    const sweep = statementsOf(functionOf(Steps.Sweep));
    const onIndex = sweep.filter((statement) => JSON.stringify(statement.Resource).includes(`/index/${LedgerIndexes.runningRuns}`));
    expect(onIndex.flatMap((statement) => [statement.Action].flat())).toEqual(['dynamodb:Query']);
    // Only the sweeper reads it.
    for (const step of DEPLOYED_STEPS.filter((other) => other !== Steps.Sweep)) {
      expect(JSON.stringify(statementsOf(functionOf(step))), step).not.toContain(`/index/${LedgerIndexes.runningRuns}`);
    }
  });

  it('lets only the approval functions, the sweeper, ExecutionStopped and the runs API query the indexes, each only the indexes it reads', () => {
    const indexReaders = DEPLOYED_STEPS.filter((step) =>
      statementsOf(functionOf(step)).some((statement) => JSON.stringify(statement.Resource).includes('/index/')),
    );
    expect(indexReaders.sort()).toEqual([Steps.ApprovalCallback, Steps.ExpireApprovals, Steps.ExecutionStopped, Steps.Sweep, Steps.RunsApi].sort());
    // The runs API: its agent's runs (runsByAgent, not a scan) and the pending approvals (a run's lifecycle), never approvals by id.
    const runsApiIndexes = JSON.stringify(statementsOf(functionOf(Steps.RunsApi)).filter((statement) => JSON.stringify(statement.Resource).includes('/index/')));
    expect(runsApiIndexes).toContain(`/index/${LedgerIndexes.runsByAgent}`);
    expect(runsApiIndexes).toContain(`/index/${LedgerIndexes.pendingApprovals}`);
    expect(runsApiIndexes).not.toContain(LedgerIndexes.byApprovalId);
    for (const step of [Steps.ExpireApprovals, Steps.ExecutionStopped]) {
      const onIndex = statementsOf(functionOf(step)).filter((statement) => JSON.stringify(statement.Resource).includes('/index/'));
      expect(JSON.stringify(onIndex), step).toContain(`/index/${LedgerIndexes.pendingApprovals}`);
      expect(JSON.stringify(onIndex), step).not.toContain(LedgerIndexes.byApprovalId);
    }
  });

  it('keeps every function but the approval functions out of the task tokens\' partition (dynamodb:LeadingKeys)', () => {
    const approvalSteps: StepName[] = [Steps.RequestApproval, Steps.ApprovalCallback, Steps.ExpireApprovals];
    // A key matches a StringLike pattern when the pattern, `*` as any run of characters, matches it whole.
    const matches = (pattern: string, key: string) => new RegExp(`^${pattern.split('*').map((part) => part.replace(/[.#^$+?()[\]{}|\\]/g, '\\$&')).join('.*')}$`).test(key);
    const onTable = (step: StepName) =>
      statementsOf(functionOf(step)).filter((statement) => [statement.Action].flat().some((action) => action.startsWith('dynamodb:')) && !JSON.stringify(statement.Resource).includes('/index/'));
    // The version pruner is on no table at all.
    const offTable: StepName[] = [Steps.PruneVersions];
    for (const step of offTable) expect(onTable(step)).toEqual([]);
    for (const step of DEPLOYED_STEPS.filter((step) => !offTable.includes(step))) {
      const statements = onTable(step);
      expect(statements.length, step).toBeGreaterThan(0);
      for (const statement of statements) {
        // The stack's shared functions serve every agent; an agent's own are held to its own effects (partitionsOf).
        // The stack's API functions (infra/stack-api.ts) too: the approval callback answers every agent's approvals.
        const shared = ([Steps.ExpireApprovals, Steps.Sweep, Steps.PruneVersions, Steps.ApprovalCallback, Steps.RunsApi, Steps.RecoverRun, Steps.ExecutionStopped] as StepName[]).includes(step);
        // Whether a run id was pruned: StartRun checks it as it creates a run (and reads it when that put fails), the runs API reads it before a start; nothing else, in those partitions only.
        if (JSON.stringify(statement.Condition ?? {}).includes('PRUNEDRUN#')) {
          expect(statement.Condition, step).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['PRUNEDRUN#*'] } });
          expect([statement.Action].flat().sort(), step).toEqual(step === Steps.StartRun ? ['dynamodb:ConditionCheckItem', 'dynamodb:GetItem'] : step === Steps.RunsApi ? ['dynamodb:GetItem'] : []);
          continue;
        }
        // Which run an execution drives: StartRun notes it, the shared recovery functions read it, in its own partition only.
        if (JSON.stringify(statement.Condition ?? {}).includes('EXEC#')) {
          expect(statement.Condition, step).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['EXEC#*'] } });
          expect([statement.Action].flat(), step).toEqual([step === Steps.StartRun ? 'dynamodb:PutItem' : 'dynamodb:GetItem']);
          continue;
        }
        if (approvalSteps.includes(step)) {
          // They read and write tokens: an agent's are held to its own partitions and the tokens', the stack's expiry sweep and approval callback to every agent's and the tokens'.
          expect(statement.Condition, step).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': shared ? [...NON_TOKEN_PARTITIONS, 'TOKEN#*'] : partitionsOf('refund-reconciler', true, 'Savepoint') } });
          continue;
        }
        if (step === Steps.RunEvents || step === Steps.RunsApi) {
          // The event stream and the runs API read (the runs API writes a cancel's kill) a run's records and its results stored by reference, and nothing else.
          expect(statement.Condition, step).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['RUN#*', 'BLOB#*'] } });
          expect([statement.Action].flat().sort(), step).toEqual(step === Steps.RunEvents ? ['dynamodb:GetItem', 'dynamodb:Query'] : ['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:Query']);
          continue;
        }
        expect(statement.Condition, step).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': shared ? [...NON_TOKEN_PARTITIONS] : partitionsOf('refund-reconciler', false, 'Savepoint') } });
        const allowed = statement.Condition!['ForAllValues:StringLike']!['dynamodb:LeadingKeys'] as string[];
        for (const key of ['RUN#r1', 'GLOBAL', 'BREAKER#model', 'BLOB#r1']) expect(allowed.some((pattern) => matches(pattern, key)), `${step} ${key}`).toBe(true);
        expect(allowed.some((pattern) => matches(pattern, 'TOKEN#r1')), step).toBe(false);
      }
    }
  });

  /** How the twin's IAM evaluator decides a request of `step`'s role on a ledger key, over the example's roles as deployed (a request's key partition is its LeadingKeys value, as AWS authorizes it). */
  const decideOnLedger = () => {
    const json = template.toJSON() as CfnTemplateJson;
    const deployment = deploy(json);
    const { roles } = stackRoles(json, deployment);
    const table = ledgerTableArn(json, physicalNames(json, deployment))!;
    const roleOf = (step: StepName) => roles.get((resources[functionOf(step)]!.Properties.Role as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0])!;
    return (step: StepName, action: string, pk: string) => evaluatePolicies(roleOf(step).policies, { action: `dynamodb:${action}`, resource: table, context: { 'dynamodb:LeadingKeys': [pk] } });
  };

  it('keeps the stack\'s approval callback and expiry sweep off child runs\' waits, execution notes and prune records, as the twin\'s IAM decides', () => {
    const decide = decideOnLedger();
    for (const step of [Steps.ApprovalCallback, Steps.ExpireApprovals] as StepName[]) {
      // What they use: runs, approvals' tokens, the effect an approval is shared through.
      for (const pk of ['RUN#r1', 'TOKEN#r1', 'EFFECT#refund-reconciler:issue_refund:rf_1']) for (const action of ['GetItem', 'PutItem', 'Query']) expect(decide(step, action, pk), `${step} ${action} ${pk}`).toBe('Allowed');
      // A child run's wait holds its parent's task token (only CallTool and ExecutionStopped reach it); which run an execution drives; the prune records.
      for (const pk of ['WAIT#r1', 'EXEC#arn:aws:states:us-east-1:000000000000:execution:Savepoint-refund-reconciler:r1', 'PRUNEDRUN#r1', 'PRUNED']) {
        for (const action of ['GetItem', 'PutItem', 'Query']) expect(decide(step, action, pk), `${step} ${action} ${pk}`).not.toBe('Allowed');
      }
    }
  });

  it('keeps the runs API to runs and their blobs: no effect, aggregate, fleet counter, breaker, kill switch or token, as the twin\'s IAM decides', () => {
    const decide = decideOnLedger();
    for (const action of ['GetItem', 'PutItem', 'Query']) for (const pk of ['RUN#r1', 'BLOB#r1']) expect(decide(Steps.RunsApi, action, pk), `${action} ${pk}`).toBe('Allowed');
    // It serves every agent of the stack: these would be every agent's.
    for (const pk of ['EFFECT#refund-reconciler:issue_refund:rf_1', 'AGG#refund-reconciler:issue_refund:cust_1', 'FLEET#refund-reconciler:2026-12-07', 'STACKFLEET#Savepoint:2026-12-07', 'BREAKER#model', 'GLOBAL', 'TOKEN#r1']) {
      for (const action of ['GetItem', 'PutItem', 'Query']) expect(decide(Steps.RunsApi, action, pk), `${action} ${pk}`).not.toBe('Allowed');
    }
  });

  it('projects into the indexes only what their queries read — never the task token', () => {
    const [table] = Object.values(template.findResources('AWS::DynamoDB::GlobalTable'));
    const indexes = table!.Properties.GlobalSecondaryIndexes as { IndexName: string; Projection: { ProjectionType: string; NonKeyAttributes: string[] } }[];
    expect(indexes.map((index) => index.IndexName).sort()).toEqual(Object.values(LedgerIndexes).sort());
    for (const index of indexes) {
      expect(index.Projection.ProjectionType, index.IndexName).toBe('INCLUDE');
      expect(index.Projection.NonKeyAttributes, index.IndexName).not.toContain('taskToken');
      const projected = { ...INDEX_PROJECTIONS, [LedgerIndexes.runningRuns]: RUN_INDEX_PROJECTION, [LedgerIndexes.runsByAgent]: RUN_INDEX_PROJECTION };
      expect(index.Projection.NonKeyAttributes.sort()).toEqual([...projected[index.IndexName as keyof typeof projected]].sort());
    }
  });
});

describe('watch it', () => {
  const alarmsByDescription = () => Object.values(template.findResources('AWS::CloudWatch::Alarm')).map((alarm) => alarm.Properties);

  it('publishes every alarm to one SNS topic, encrypted with a rotated key CloudWatch may use, TLS only', () => {
    // The alarm topic (the approvals have a topic of their own, for approvers).
    const topicId = Object.keys(template.findResources('AWS::SNS::Topic')).find((id) => id.startsWith('OperationsAlarmTopic'));
    for (const alarm of alarmsByDescription()) expect(alarm.AlarmActions, alarm.AlarmDescription).toEqual([{ Ref: topicId }]);
    template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [Match.stringLikeRegexp('AlarmTopicKey'), 'Arn'] } });
    template.hasResourceProperties('AWS::KMS::Key', {
      EnableKeyRotation: true,
      KeyPolicy: { Statement: Match.arrayWith([Match.objectLike({ Principal: { Service: 'cloudwatch.amazonaws.com' }, Action: ['kms:Decrypt', 'kms:GenerateDataKey*'] })]) },
    });
    template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: { Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]) },
    });
    expect(Object.keys(template.findOutputs('*')).some((id) => id.includes('AlarmTopicArn'))).toBe(true);
  });

  it('alarms on failed or timed-out executions of the agent state machine', () => {
    const alarm = alarmsByDescription().find((props) => props.AlarmDescription.includes('failed or timed out'))!;
    const metrics = JSON.stringify(alarm.Metrics);
    expect(metrics).toContain('"MetricName":"ExecutionsFailed"');
    expect(metrics).toContain('"MetricName":"ExecutionsTimedOut"');
    expect(metrics).toContain('"Expression":"failed + timedOut"');
    expect(alarm).toMatchObject({ Threshold: 1, ComparisonOperator: 'GreaterThanOrEqualToThreshold', TreatMissingData: 'notBreaching' });
  });

  // The agent's functions emit as the agent (`service`); the ones the stack's agents share (the
  // expiry sweep, the sweeper, recovery: infra/control-plane.ts, infra/recovery.ts) as the stack, and their alarms are the stack's.
  const SHARED = 'Savepoint';
  it.each([
    ['runs given up by recovery or the sweeper', MetricNames.RecoveriesGivenUp, SHARED, { Threshold: 1, Statistic: 'Sum', Period: 300 }],
    ['an approval waiting longer than 12 hours', MetricNames.OldestApprovalAgeSeconds, SHARED, { Threshold: 12 * 3600, Statistic: 'Maximum', ComparisonOperator: 'GreaterThanThreshold' }],
    ['daily spend above the threshold', MetricNames.Dollars, 'refund-reconciler', { Threshold: 50, Statistic: 'Sum', Period: 86400, ComparisonOperator: 'GreaterThanThreshold' }],
    ['a breaker open for 15 minutes', MetricNames.BreakerOpen, 'refund-reconciler', { Threshold: 1, Period: 60, EvaluationPeriods: 15, DatapointsToAlarm: 15 }],
    ['runs the sweeper cannot resume', MetricNames.RunsNeedingAttention, SHARED, { Threshold: 1 }],
    ['approvals whose execution is gone', MetricNames.OrphanedApprovals, SHARED, { Threshold: 1 }],
    ['a write escalated to a person (its outcome unknown, not sent again)', MetricNames.EffectsEscalated, 'refund-reconciler', { Threshold: 1, Statistic: 'Sum', Period: 300 }],
  ])('alarms on %s, from the metric the functions emit', (_case, metricName, service, expected) => {
    const alarm = alarmsByDescription().find((props) => props.MetricName === metricName && props.Dimensions?.[0]?.Value === service);
    expect(alarm, `${metricName} of ${service}`).toBeDefined();
    expect(alarm).toMatchObject({ Namespace: METRICS_NAMESPACE, Dimensions: [{ Name: 'service', Value: service }], ...expected });
  });

  it('emits the shared functions\' metrics as the stack they alarm on', () => {
    for (const step of [Steps.Sweep, Steps.ExpireApprovals, Steps.RecoverRun, Steps.ExecutionStopped]) expect(resources[functionOf(step)]!.Properties.Environment.Variables.POWERTOOLS_SERVICE_NAME, step).toBe(SHARED);
  });

  it('alarms when the cost of a run leaves its usual band (anomaly detection on DollarsPerRun)', () => {
    const alarm = alarmsByDescription().find((props) => props.AlarmDescription.includes('cost of a run'))!;
    expect(alarm).toMatchObject({ ComparisonOperator: 'GreaterThanUpperThreshold', ThresholdMetricId: expect.any(String), TreatMissingData: 'notBreaching' });
    const metrics = JSON.stringify(alarm.Metrics);
    expect(metrics).toContain('"MetricName":"DollarsPerRun"');
    expect(metrics).toMatch(/"Expression":"ANOMALY_DETECTION_BAND\(\w+, 3\)"/);
  });

  it('names the runbook entry of every alarm in its description', () => {
    for (const alarm of alarmsByDescription()) expect(alarm.AlarmDescription).toMatch(/Runbook: docs\/operating-on-aws\.md#[a-z]+$/);
    expect(Object.keys(AlarmIds).length).toBe(11);
  });

  it('has a runbook entry in the guide it names for every alarm', () => {
    for (const alarm of alarmsByDescription()) {
      const [, path, anchor] = /Runbook: (docs\/[a-z-]+\.md)#([a-z]+)$/.exec(alarm.AlarmDescription)!;
      const guide = DOC_FILES.get(path!);
      expect(guide, path).toBeDefined();
      const headings = new Set([...guide!.matchAll(/^#{2,4} (.+)$/gm)].map((match) => match[1]!.trim().toLowerCase().replace(/[^a-z0-9 -]/g, '').replace(/ /g, '-')));
      expect(headings.has(anchor!), anchor).toBe(true);
    }
  });

  it('takes the thresholds from the agent, and refuses nonsense at synth time', () => {
    const app = assertionApp();
    const stack = new SavepointStack(app, 'Thresholds');
    stack.addAgent('A', { agentName: 'a', entry: 'agent.ts', alarms: { approvalWaitHours: 2, dailySpendDollars: 7, breakerOpenMinutes: 5 } });
    const alarms = Object.values(Template.fromStack(stack).findResources('AWS::CloudWatch::Alarm')).map((alarm) => alarm.Properties);
    expect(alarms.find((alarm) => alarm.MetricName === MetricNames.OldestApprovalAgeSeconds)!.Threshold).toBe(7200);
    expect(alarms.find((alarm) => alarm.MetricName === MetricNames.Dollars)!.Threshold).toBe(7);
    expect(alarms.find((alarm) => alarm.MetricName === MetricNames.BreakerOpen)!.EvaluationPeriods).toBe(5);
    expect(() => new SavepointStack(assertionApp(), 'Bad').addAgent('B', { agentName: 'b', entry: 'agent.ts', alarms: { breakerOpenMinutes: 0 } })).toThrow(
      /breakerOpenMinutes must be an integer from 1 to 60, got 0/,
    );
  });

  it('fails at synth on a threshold CloudWatch cannot hold, naming the agent, the prop and the value', () => {
    const add = (alarms: object) => () => new SavepointStack(assertionApp(), 'Bad').addAgent('Spend', { agentName: 'spend', entry: 'agent.ts', alarms });
    // These synthesized an alarm whose Threshold was null (Infinity in JSON), and a band of ANOMALY_DETECTION_BAND(m0, Infinity): refused at deploy.
    expect(add({ dailySpendDollars: Infinity })).toThrow('DurableAgent Spend: alarms.dailySpendDollars must be a positive, finite number of dollars, got Infinity');
    expect(add({ costAnomalyStdDevs: Infinity })).toThrow('DurableAgent Spend: alarms.costAnomalyStdDevs must be a finite number above 0, got Infinity');
    expect(add({ approvalWaitHours: 0 })).toThrow('DurableAgent Spend: alarms.approvalWaitHours must be above 0 and at most 168, got 0');
  });

  it('draws one dashboard per stack: runs by status, cost per run and day, steps per run, retries, guard stops, breaker, approvals and their age', () => {
    const dashboards = Object.values(template.findResources('AWS::CloudWatch::Dashboard'));
    expect(dashboards).toHaveLength(1);
    const body = JSON.stringify(dashboards[0]!.Properties.DashboardBody);
    for (const name of [
      MetricNames.RunsSucceeded,
      MetricNames.RunsFailed,
      MetricNames.Dollars,
      MetricNames.DollarsPerRun,
      MetricNames.StepsPerRun,
      MetricNames.Retries,
      MetricNames.GuardStops,
      MetricNames.BreakerOpen,
      MetricNames.ApprovalsWaiting,
      MetricNames.OldestApprovalAgeSeconds,
      'ExecutionsFailed',
    ]) {
      expect(body, name).toContain(`\\"${name}\\"`);
    }
    expect(body).toContain(METRICS_NAMESPACE);
  });

  it('shares the dashboard and the topic between the agents of a stack', () => {
    const app = assertionApp();
    const stack = new SavepointStack(app, 'Two');
    stack.addAgent('A', { agentName: 'a', entry: 'agent.ts' });
    stack.addAgent('B', { agentName: 'b', entry: 'agent.ts' });
    const two = Template.fromStack(stack);
    expect(Object.keys(two.findResources('AWS::CloudWatch::Dashboard'))).toHaveLength(1);
    expect(Object.keys(two.findResources('AWS::SNS::Topic')).filter((id) => id.includes('AlarmTopic'))).toHaveLength(1);
  });
});
