import { Duration } from 'aws-cdk-lib';
import { Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Queue, QueueEncryption, type IQueue } from 'aws-cdk-lib/aws-sqs';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { Steps } from '../lambdas/shared/steps.js';
import type { LedgerTable } from './ledger-table.js';
import { StepFunction } from './step-function.js';

export interface RunRecoveryProps {
  /** The agent whose runs it recovers: its role reaches only that agent's effects. @default every agent's */
  readonly agentName?: string;
  readonly ledger: LedgerTable;
  /** The agent state machine's ARNs, built from its fixed name (the function must not reference the resource). */
  readonly stateMachine: { readonly stateMachine: string; readonly executions: string; readonly alias: string };
  /**
   * Recoveries in a row without progress before a run is given up (`Agent.Unrecoverable`).
   * @default 3
   */
  readonly maxRecoveries?: number;
  readonly environment?: Record<string, string>;
  /** The agent's module (the recovery function reads the agent's scheduled-input rule). */
  readonly agentEntry: string;
  /** Where the rule's undeliverable events go: the stack's (infra/control-plane.ts). @default a queue of its own */
  readonly deadLetters?: IQueue;
  /** The function's log group. @default its own */
  readonly logGroup?: ILogGroup;
}

/**
 * Recovery without an operator: an EventBridge rule on the agent state machine's "Execution
 * Status Change" sends FAILED and TIMED_OUT executions to the RecoverRun function, which resumes
 * the run with a new execution of the same run id (lambdas/steps/recover.ts), bounded by
 * `maxRecoveries`. ABORTED is left out: StopExecution is an operator's kill.
 */
export class RunRecovery extends Construct {
  readonly function: StepFunction;
  readonly rule: Rule;
  /** Events the rule could not deliver. */
  readonly deadLetters: IQueue;

  constructor(scope: Construct, id: string, props: RunRecoveryProps) {
    super(scope, id);
    const maxRecoveries = props.maxRecoveries ?? 3;
    if (!Number.isInteger(maxRecoveries) || maxRecoveries < 1 || maxRecoveries > 20) {
      throw new Error(`maxRecoveries must be an integer from 1 to 20, got ${maxRecoveries}`);
    }
    this.function = new StepFunction(this, 'Function', {
      step: Steps.RecoverRun,
      agentEntry: props.agentEntry,
      ...(props.logGroup && { logGroup: props.logGroup }),
      environment: { ...props.environment, STATE_MACHINE_ARN: props.stateMachine.alias, MAX_RECOVERIES: String(maxRecoveries) },
    });
    props.ledger.grantTo(this.function, 'recoverRun', props.agentName);
    this.function.addToRolePolicy(new PolicyStatement({ actions: ['states:DescribeExecution'], resources: [props.stateMachine.executions] }));
    // A run is resumed on the version its ended execution ran (DescribeExecution), else on the alias.
    this.function.addToRolePolicy(new PolicyStatement({ actions: ['states:StartExecution'], resources: [props.stateMachine.stateMachine] }));

    const deadLetters = (this.deadLetters = props.deadLetters ?? new Queue(this, 'DeadLetters', { encryption: QueueEncryption.SQS_MANAGED, enforceSSL: true, retentionPeriod: Duration.days(14) }));
    this.rule = new Rule(this, 'Rule', {
      description: 'Resumes a run whose execution failed or timed out, with a new execution of the same run id.',
      eventPattern: {
        source: ['aws.states'],
        detailType: ['Step Functions Execution Status Change'],
        detail: { status: ['FAILED', 'TIMED_OUT'], stateMachineArn: [props.stateMachine.stateMachine] },
      },
      // EventBridge retries a failed recovery (the step is idempotent per ended execution); what
      // still fails lands in the dead-letter queue rather than vanishing.
      targets: [new LambdaFunction(this.function, { retryAttempts: 4, maxEventAge: Duration.hours(6), deadLetterQueue: deadLetters })],
    });
  }
}
