/**
 * A local deployment of a synthesized template: the physical ids CloudFormation would give its
 * resources, and how a later deploy changes them. What matters for the twin is what AWS keeps
 * across deploys:
 *
 * - A Lambda `AWS::Lambda::Version` is immutable. A deploy that changes a function's code gives
 *   its `currentVersion` a new logical id (CDK hashes the code into it), so CloudFormation creates
 *   a new version (the next number) and, since CDK retains old versions, keeps the old one.
 * - An `AWS::StepFunctions::StateMachineVersion` likewise: a new one per changed definition.
 * - Roles' policies are replaced by the new template's: there is one policy per role, not one per
 *   version, so a live execution of an old state machine version is authorized by today's policy.
 *
 * `Ref` and `Fn::GetAtt Arn` resolve to the ARNs below (region us-east-1, account 000000000000,
 * the local engine's); a resource's name is its logical id, as local/template/asl.ts has always used.
 */
import type { CfnTemplateJson, PhysicalNames } from '../../template/asl.js';
export declare const LOCAL_ACCOUNT = "000000000000";
export declare const LOCAL_REGION = "us-east-1";
/** Version numbers handed out so far, by the logical id of the version resource. */
export interface DeploymentState {
    /** `AWS::Lambda::Version` logical id → its function and number (per function, 1, 2, …). */
    readonly lambdaVersions: ReadonlyMap<string, {
        readonly functionId: string;
        readonly number: number;
    }>;
    /** `AWS::StepFunctions::StateMachineVersion` logical id → its number. */
    readonly stateMachineVersions: ReadonlyMap<string, number>;
}
export declare const EMPTY_DEPLOYMENT: DeploymentState;
/**
 * Deploys `template` over `previous`, as CloudFormation would: a version resource already there
 * keeps its number, a new one gets its function's (or state machine's) next number.
 */
export declare function deploy(template: CfnTemplateJson, previous?: DeploymentState): DeploymentState;
/** The ARNs `Ref` and `Fn::GetAtt Arn` resolve to, in this deployment. */
export declare function physicalNames(template: CfnTemplateJson, state: DeploymentState): PhysicalNames;
