import { CfnOutput, CfnParameter, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import { AuthorizationType, LambdaIntegration, MethodLoggingLevel, RestApi, LogGroupLogDestination, AccessLogFormat } from 'aws-cdk-lib/aws-apigateway';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction, SfnStateMachine } from 'aws-cdk-lib/aws-events-targets';
import { LogGroup, RetentionDays } from 'aws-cdk-lib/aws-logs';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Construct } from 'constructs';
import { Steps } from '../lambdas/shared/steps.js';
import { AgentStateMachine } from './agent-state-machine.js';
import { LedgerTable } from './ledger-table.js';
import { RunRecovery } from './recovery.js';
import { StepFunction } from './step-function.js';

export interface SavepointStackProps extends StackProps {
  /**
   * When the nightly run starts (UTC); it reconciles the day before.
   * @default 02:00 UTC every day
   */
  readonly nightlyAt?: { readonly hour: number; readonly minute: number };
  /** Version string recorded in every run's fingerprint. @default the package version */
  readonly codeVersion?: string;
}

/**
 * savepoint on AWS: the agent loop as a Step Functions Standard state machine, the ledger table,
 * the nightly EventBridge schedule, the approval API and the approval expiry sweep.
 */
export class SavepointStack extends Stack {
  constructor(scope: Construct, id: string, props: SavepointStackProps = {}) {
    super(scope, id, props);
    const nightly = props.nightlyAt ?? { hour: 2, minute: 0 };
    if (!Number.isInteger(nightly.hour) || nightly.hour < 0 || nightly.hour > 23 || !Number.isInteger(nightly.minute) || nightly.minute < 0 || nightly.minute > 59) {
      throw new Error(`nightlyAt must be a time of day, got ${JSON.stringify(nightly)}`);
    }

    // The outside systems are deploy-time parameters: the same template serves every environment.
    const modelApiUrl = new CfnParameter(this, 'ModelApiUrl', {
      type: 'String',
      description: 'Base URL of the messages API the agent calls (POST {url}/v1/messages).',
      allowedPattern: '^https?://.+',
    });
    const modelApiKey = new CfnParameter(this, 'ModelApiKey', { type: 'String', noEcho: true, description: 'API key of the model provider.' });
    const paymentsApiUrl = new CfnParameter(this, 'PaymentsApiUrl', {
      type: 'String',
      description: 'Base URL of the payments provider (refunds with Idempotency-Key).',
      allowedPattern: '^https?://.+',
    });

    const ledger = new LedgerTable(this, 'Ledger');
    const common = { CODE_VERSION: props.codeVersion ?? 'dev' };
    const callModel = new StepFunction(this, 'CallModelFunction', {
      step: Steps.CallModel,
      timeout: Duration.seconds(75),
      environment: { ...common, MODEL_API_URL: modelApiUrl.valueAsString, MODEL_API_KEY: modelApiKey.valueAsString },
    });
    const callTool = new StepFunction(this, 'CallToolFunction', {
      step: Steps.CallTool,
      timeout: Duration.seconds(30),
      // The lease outlives the invocation that takes it, so a live call is never taken over.
      environment: { ...common, PAYMENTS_API_URL: paymentsApiUrl.valueAsString, TOOL_LEASE_MS: String(40_000) },
    });
    const functions = {
      startRun: new StepFunction(this, 'StartRunFunction', { step: Steps.StartRun, environment: common }),
      budgetCheck: new StepFunction(this, 'BudgetCheckFunction', { step: Steps.BudgetCheck, environment: common }),
      callModel,
      requestApproval: new StepFunction(this, 'RequestApprovalFunction', { step: Steps.RequestApproval, environment: common }),
      callTool,
      finalize: new StepFunction(this, 'FinalizeFunction', { step: Steps.Finalize, environment: common }),
    };
    const approvalCallback = new StepFunction(this, 'ApprovalCallbackFunction', { step: Steps.ApprovalCallback, environment: common });
    const expireApprovals = new StepFunction(this, 'ExpireApprovalsFunction', { step: Steps.ExpireApprovals, environment: common });
    const executionStopped = new StepFunction(this, 'ExecutionStoppedFunction', { step: Steps.ExecutionStopped, environment: common });
    for (const fn of [...Object.values(functions), approvalCallback, expireApprovals, executionStopped]) ledger.grantTo(fn);

    const { stateMachine, arns } = new AgentStateMachine(this, 'Agent', { functions });
    // Grants by ARN built from the state machine's fixed name: referencing the resource itself
    // would make the functions and the state machine depend on each other.
    const taskResponse = new PolicyStatement({
      actions: ['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat'],
      resources: [arns.stateMachine],
    });
    for (const fn of [functions.requestApproval, approvalCallback, expireApprovals]) fn.addToRolePolicy(taskResponse);
    functions.startRun.addToRolePolicy(
      new PolicyStatement({ actions: ['states:DescribeExecution', 'states:DescribeStateMachineForExecution'], resources: [arns.executions] }),
    );

    new RunRecovery(this, 'Recovery', { ledger, stateMachine: arns, environment: common });

    const deadLetters = new Queue(this, 'ScheduleDeadLetters', { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) });
    new Rule(this, 'NightlySchedule', {
      description: 'Starts the nightly refund reconciliation; the run id is derived from the event time.',
      schedule: Schedule.cron({ hour: String(nightly.hour), minute: String(nightly.minute) }),
      targets: [new SfnStateMachine(stateMachine, { deadLetterQueue: deadLetters, retryAttempts: 4, maxEventAge: Duration.hours(2) })],
    });
    new Rule(this, 'ApprovalExpirySweep', {
      description: 'Escalates approvals whose deadline has passed.',
      schedule: Schedule.rate(Duration.minutes(1)),
      targets: [new LambdaFunction(expireApprovals, { retryAttempts: 2 })],
    });

    // StopExecution is a kill switch too: the run record learns who stopped it and when.
    new Rule(this, 'ExecutionAborted', {
      description: 'Marks a run killed when its execution is stopped (StopExecution).',
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: { status: ['ABORTED'], stateMachineArn: [arns.stateMachine] },
      },
      targets: [new LambdaFunction(executionStopped, { retryAttempts: 4 })],
    });

    const api = new RestApi(this, 'ApprovalApi', {
      description: 'Decide the approvals savepoint runs wait on.',
      cloudWatchRole: true,
      deployOptions: {
        stageName: 'v1',
        tracingEnabled: true,
        loggingLevel: MethodLoggingLevel.INFO,
        accessLogDestination: new LogGroupLogDestination(new LogGroup(this, 'ApprovalApiAccessLogs', { retention: RetentionDays.THREE_MONTHS })),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
      },
      // Callers sign their requests (SigV4): deciding an approval moves money.
      defaultMethodOptions: { authorizationType: AuthorizationType.IAM },
    });
    const integration = new LambdaIntegration(approvalCallback);
    const approvals = api.root.addResource('approvals');
    approvals.addMethod('GET', integration);
    const approval = approvals.addResource('{approvalId}');
    approval.addMethod('GET', integration);
    approval.addMethod('POST', integration);

    new CfnOutput(this, 'StateMachineArn', { value: stateMachine.stateMachineArn });
    new CfnOutput(this, 'LedgerTableName', { value: ledger.table.tableName });
    new CfnOutput(this, 'ApprovalApiUrl', { value: api.urlForPath('/approvals') });
  }
}
