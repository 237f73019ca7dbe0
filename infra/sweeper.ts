import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';
import { Steps } from '../lambdas/shared/steps.js';
import type { LedgerTable } from './ledger-table.js';
import { StepFunction } from './step-function.js';

export interface RunSweeperProps {
  readonly ledger: LedgerTable;
  /** The agent state machine's ARNs, built from its fixed name. */
  readonly stateMachine: { readonly stateMachine: string; readonly executions: string; readonly alias: string };
  readonly agentEntry: string;
  readonly environment?: Record<string, string>;
  /** Recoveries in a row without progress before a run is given up (as RunRecovery's). @default 3 */
  readonly maxRecoveries?: number;
  /** @default Duration.minutes(15) */
  readonly every?: Duration;
  /** Where events the rule could not deliver go. */
  readonly deadLetterQueue?: IQueue;
  /** The function's log group. @default its own */
  readonly logGroup?: ILogGroup;
}

/**
 * The sweeper (lambdas/steps/sweep.ts) on a schedule: resumes runs still marked `running` whose
 * execution ended unnoticed, and reports approvals whose execution is gone. It may describe the
 * agent's executions and start new ones — nothing else in Step Functions.
 */
export class RunSweeper extends Construct {
  readonly function: StepFunction;
  readonly rule: Rule;

  constructor(scope: Construct, id: string, props: RunSweeperProps) {
    super(scope, id);
    const every = props.every ?? Duration.minutes(15);
    if (every.toMinutes() < 5 || every.toMinutes() > 60) throw new Error(`RunSweeper ${id}: every must be from 5 to 60 minutes, got ${every.toHumanString()}`);
    this.function = new StepFunction(this, 'Function', {
      step: Steps.Sweep,
      agentEntry: props.agentEntry,
      ...(props.logGroup && { logGroup: props.logGroup }),
      // A sweep reads every running run and pending approval, one DescribeExecution each.
      timeout: Duration.minutes(5),
      environment: { ...props.environment, STATE_MACHINE_ARN: props.stateMachine.alias, MAX_RECOVERIES: String(props.maxRecoveries ?? 3) },
    });
    props.ledger.grantTo(this.function, 'sweep');
    // A run is resumed on the version its ended execution ran (DescribeExecution), else on the alias.
    this.function.addToRolePolicy(new PolicyStatement({ actions: ['states:StartExecution'], resources: [props.stateMachine.stateMachine] }));
    this.function.addToRolePolicy(new PolicyStatement({ actions: ['states:DescribeExecution'], resources: [props.stateMachine.executions] }));
    this.rule = new Rule(this, 'Rule', {
      description: 'Resumes runs whose execution ended unnoticed; reports approvals whose execution is gone.',
      schedule: Schedule.rate(every),
      targets: [new LambdaFunction(this.function, { retryAttempts: 2, maxEventAge: Duration.minutes(10), ...(props.deadLetterQueue && { deadLetterQueue: props.deadLetterQueue }) })],
    });
  }
}
