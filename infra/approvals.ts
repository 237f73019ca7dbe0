import { Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import { Key, KeySpec, KeyUsage } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';

/** Who decides an agent's approvals, and how they are told (`DurableAgentProps.approvals`). */
export interface ApprovalSettings {
  /**
   * Who is sent a signed, single-use link to the approval page (e-mail addresses, chat handles; a
   * list, or one comma-separated string such as a stack parameter).
   * @default none: approvals are decided through the IAM-signed API only
   */
  readonly approvers?: string | readonly string[];
  /** The identity that started a run may not approve its requests. @default true */
  readonly separationOfDuties?: boolean;
  /** Above this amount (minor units), two different approvers must approve. @default none */
  readonly secondApproverAboveMinor?: number;
  /** An SNS topic approvers can subscribe to (mail, chat), next to the EventBridge event. @default false */
  readonly topic?: boolean;
}

export interface ApprovalMachineryProps {
  readonly settings?: ApprovalSettings;
  /** Requests approvals: sends the event and signs the links. */
  readonly requestApproval: LambdaFunction;
  /** Applies approved calls: verifies decisions. */
  readonly callTool: LambdaFunction;
  /** BudgetCheck applies approved budget extensions: it verifies their decisions too. */
  readonly budgetCheck?: LambdaFunction;
  /** The approval API's function: verifies links, signs decisions. Absent when there is no API. */
  readonly callback?: LambdaFunction;
  /** The approval page's URL (`…/decide`), when there is an API. */
  readonly pageUrl?: string;
  /** Records who started a run: it verifies the runs API's signature of the starter. */
  readonly startRun?: LambdaFunction;
  /** The runs API's function (`POST /runs`): signs who started a run. Absent when there is no API. */
  readonly runsApi?: LambdaFunction;
}

/**
 * What approvals need on AWS, each grant to the one function that needs it:
 *   - the approval-requested event (EventBridge `PutEvents` on the default bus) and an optional
 *     SNS topic, for RequestApproval;
 *   - the link key (a generated Secrets Manager secret), read by RequestApproval (signs links)
 *     and the callback (verifies them);
 *   - the decision key (a KMS HMAC key): the callback may `GenerateMac` and `VerifyMac`, CallTool
 *     and BudgetCheck (budget extensions) only `VerifyMac` — nothing else that can write to the table can forge a decision;
 *   - the starter key (a KMS HMAC key): the runs API may `GenerateMac`, StartRun only `VerifyMac` —
 *     a run's recorded starter is the principal API Gateway verified, never a field of the input
 *     (lambdas/runs/starter.ts);
 *   - the policy (separation of duties, a second approver) as the callback's environment: set by
 *     whoever deploys, out of reach of the run's input and the model.
 */
export class ApprovalMachinery extends Construct {
  readonly decisionKey?: Key;
  readonly starterKey?: Key;
  readonly linkKey?: Secret;
  readonly topic?: Topic;

  constructor(scope: Construct, id: string, props: ApprovalMachineryProps) {
    super(scope, id);
    const settings = props.settings ?? {};
    const approvers = typeof settings.approvers === 'string' ? settings.approvers : (settings.approvers ?? []).join(',');
    if (settings.secondApproverAboveMinor !== undefined && (!Number.isInteger(settings.secondApproverAboveMinor) || settings.secondApproverAboveMinor < 0)) {
      throw new Error(`approvals.secondApproverAboveMinor must be a whole amount in minor units ≥ 0, got ${settings.secondApproverAboveMinor}`);
    }
    const { requestApproval, callTool, callback } = props;

    requestApproval.addEnvironment('APPROVAL_EVENT_BUS', 'default');
    requestApproval.addToRolePolicy(
      new PolicyStatement({ actions: ['events:PutEvents'], resources: [Stack.of(this).formatArn({ service: 'events', resource: 'event-bus', resourceName: 'default' })] }),
    );
    if (settings.topic) {
      this.topic = new Topic(this, 'ApprovalTopic', { displayName: 'savepoint approvals', enforceSSL: true });
      this.topic.grantPublish(requestApproval);
      requestApproval.addEnvironment('APPROVAL_TOPIC_ARN', this.topic.topicArn);
    }
    if (!callback) return;

    // Links only make sense with a page to open them on.
    if (approvers && props.pageUrl) {
      this.linkKey = new Secret(this, 'LinkKey', {
        description: 'HMAC key of the signed approval links',
        generateSecretString: { passwordLength: 64, excludePunctuation: true },
      });
      for (const fn of [requestApproval, callback]) {
        this.linkKey.grantRead(fn);
        fn.addEnvironment('APPROVAL_LINK_SECRET_ARN', this.linkKey.secretArn);
      }
      requestApproval.addEnvironment('APPROVAL_PAGE_URL', props.pageUrl);
      requestApproval.addEnvironment('APPROVERS', approvers);
    }

    this.decisionKey = new Key(this, 'DecisionKey', {
      description: 'Signs approval decisions (only the approval callback can)',
      keySpec: KeySpec.HMAC_256,
      keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
      removalPolicy: RemovalPolicy.RETAIN,
      pendingWindow: Duration.days(30),
    });
    this.decisionKey.grant(callback, 'kms:GenerateMac', 'kms:VerifyMac');
    const verifiers = [callTool, ...(props.budgetCheck ? [props.budgetCheck] : [])];
    for (const fn of verifiers) this.decisionKey.grant(fn, 'kms:VerifyMac');
    for (const fn of [callback, ...verifiers]) fn.addEnvironment('DECISION_KEY_ID', this.decisionKey.keyArn);

    if (props.runsApi && props.startRun) {
      // A key of its own: the approval callback cannot sign a starter, nor the runs API a decision.
      this.starterKey = new Key(this, 'StarterKey', {
        description: 'Signs who started a run (only the runs API can)',
        keySpec: KeySpec.HMAC_256,
        keyUsage: KeyUsage.GENERATE_VERIFY_MAC,
        removalPolicy: RemovalPolicy.RETAIN,
        pendingWindow: Duration.days(30),
      });
      this.starterKey.grant(props.runsApi, 'kms:GenerateMac');
      this.starterKey.grant(props.startRun, 'kms:VerifyMac');
      for (const fn of [props.runsApi, props.startRun]) fn.addEnvironment('STARTER_KEY_ID', this.starterKey.keyArn);
    }

    callback.addEnvironment('SEPARATION_OF_DUTIES', String(settings.separationOfDuties ?? true));
    if (settings.secondApproverAboveMinor !== undefined) callback.addEnvironment('SECOND_APPROVER_ABOVE_MINOR', String(settings.secondApproverAboveMinor));
  }
}
