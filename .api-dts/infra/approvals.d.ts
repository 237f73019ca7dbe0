import { Key } from 'aws-cdk-lib/aws-kms';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { Topic } from 'aws-cdk-lib/aws-sns';
import { Construct } from 'constructs';
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
export declare class ApprovalMachinery extends Construct {
    readonly decisionKey?: Key;
    readonly starterKey?: Key;
    readonly linkKey?: Secret;
    readonly topic?: Topic;
    constructor(scope: Construct, id: string, props: ApprovalMachineryProps);
}
