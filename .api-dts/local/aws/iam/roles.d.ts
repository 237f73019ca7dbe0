/**
 * The roles of a synthesized template and their identity policies, with every intrinsic resolved
 * to the deployment's ARNs: which role each Lambda function (by its SAVEPOINT_STEP) runs as, the
 * state machine's role, and the roles EventBridge targets assume (the schedule's).
 */
import { type CfnTemplateJson } from '../../template/asl.js';
import { type DeploymentState } from './deployment.js';
import type { PolicyDocument } from './policy.js';
export interface Role {
    /** The role's logical id; locally also its name. */
    readonly id: string;
    readonly arn: string;
    /** Its identity policies: inline, attached `AWS::IAM::Policy` resources, and the AWS managed ones this module knows. */
    readonly policies: readonly PolicyDocument[];
}
export interface StackRoles {
    readonly roles: ReadonlyMap<string, Role>;
    /**
     * A Lambda function's SAVEPOINT_STEP → the function, the role it runs as, and the ARNs its
     * environment names for the services it calls besides Step Functions (SERVICE_VARIABLES).
     */
    readonly stepRoles: ReadonlyMap<string, {
        readonly role: string;
        readonly functionId: string;
        readonly services: ServiceVariables;
    }>;
    /** The state machine's role (what its Task states invoke Lambda functions as). */
    readonly stateMachineRole?: string;
    /** EventBridge targets that assume a role to call their target (e.g. the schedule's StartExecution). */
    readonly ruleTargets: readonly {
        readonly ruleId: string;
        readonly roleId: string;
        readonly targetArn: string;
    }[];
}
/**
 * The variables through which a function is told the resources it calls (lambdas/adapters/aws-deps.ts),
 * resolved to this deployment's values: what the twin authorizes those calls against.
 */
export declare const SERVICE_VARIABLES: readonly ['LEDGER_SEAL_SECRET_ARN', 'APPROVAL_LINK_SECRET_ARN', 'DECISION_KEY_ID', 'STARTER_KEY_ID', 'APPROVAL_EVENT_BUS', 'APPROVAL_TOPIC_ARN'];
export type ServiceVariables = Readonly<Partial<Record<(typeof SERVICE_VARIABLES)[number], string>>>;
export declare function stackRoles(template: CfnTemplateJson, deployment: DeploymentState): StackRoles;
