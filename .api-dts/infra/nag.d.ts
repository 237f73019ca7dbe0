import type { RestApi } from 'aws-cdk-lib/aws-apigateway';
import type { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import type { IConstruct } from 'constructs';
/**
 * The cdk-nag findings (AwsSolutions and Serverless packs) a DurableAgent acknowledges, each on the
 * narrowest construct it concerns, with the reason. Everything else nag reports is fixed in the
 * constructs; test/infra/nag.test.ts keeps the count of unacknowledged findings at zero.
 */
export declare function acknowledgeNagFindings(agent: IConstruct, parts: {
    stateMachine: StateMachine;
    stateMachineName: string;
    api?: RestApi;
}): void;
