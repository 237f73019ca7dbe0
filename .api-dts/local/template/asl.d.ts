export interface CfnResource {
    Type: string;
    Properties?: Record<string, unknown>;
}
export interface CfnTemplateJson {
    Resources?: Record<string, CfnResource>;
    Parameters?: Record<string, {
        Default?: unknown;
    }>;
}
/** A state as far as the local engine cares; everything else passes through untouched. */
export interface AslState {
    Type: string;
    Resource?: string;
    Parameters?: Record<string, unknown>;
    TimeoutSeconds?: number;
    TimeoutSecondsPath?: string;
    HeartbeatSeconds?: number;
    Branches?: AslDefinition[];
    ItemProcessor?: AslDefinition;
    Iterator?: AslDefinition;
    [field: string]: unknown;
}
export interface AslDefinition {
    StartAt: string;
    States: Record<string, AslState>;
    TimeoutSeconds?: number;
    [field: string]: unknown;
}
export interface TaskInfo {
    /** SAVEPOINT_STEP of the invoked function: which handler runs this Task. */
    step: string;
    functionLogicalId: string;
    waitForTaskToken: boolean;
    timeoutSeconds?: number;
    heartbeatSeconds?: number;
}
export interface ExtractOptions {
    /** Pick one state machine when the template has several. */
    stateMachineLogicalId?: string;
    region?: string;
    accountId?: string;
    partition?: string;
    /**
     * What `Ref` and `Fn::GetAtt …Arn` of a resource resolve to, where the caller knows it (local/aws/iam:
     * a deployment's version ARNs and resource ARNs); `undefined` falls back to the logical id.
     * @default the logical id stands in for every physical id
     */
    physical?: PhysicalNames;
}
/** A deployment's physical ids: the values CloudFormation would give `Ref` and `Fn::GetAtt Arn`. */
export interface PhysicalNames {
    ref?(logicalId: string, resource: CfnResource): string | undefined;
    arn?(logicalId: string, resource: CfnResource): string | undefined;
}
export interface ExtractedStateMachine {
    logicalId: string;
    name: string;
    stateMachineArn: string;
    definition: AslDefinition;
    tasks: Record<string, TaskInfo>;
}
export declare function extractStateMachine(template: CfnTemplateJson, opts?: ExtractOptions): ExtractedStateMachine;
/**
 * Any value of the template (a policy document, a rule's target) with its intrinsics resolved the
 * way the state machine's definition is: the same local account, region and physical ids.
 */
export declare function resolveTemplateValue(value: unknown, template: CfnTemplateJson, opts: Omit<ExtractOptions, 'stateMachineLogicalId'> & {
    where: string;
}): unknown;
/** Calls visit for every state, including those nested in Parallel branches and Map processors. */
export declare function walkStates(definition: AslDefinition, visit: (name: string, state: AslState) => void): void;
