import type { CfnTemplateJson, PhysicalNames } from '../../template/asl.js';
import type { EngineIam } from '../../engine/local-engine.js';
import { IamAuthorizer, type IamDecisions } from './authorizer.js';
import { RoleCredentials, type AccessKey } from './credentials.js';
import type { AuthorizationRequest } from './policy.js';
import { type ServiceVariables } from './roles.js';
export { AccessDeniedError, IamAuthorizer, type Caller, type IamDecisions } from './authorizer.js';
export { RoleCredentials, type AccessKey } from './credentials.js';
export interface TwinIam {
    readonly authorizer: IamAuthorizer;
    readonly credentials: RoleCredentials;
    /** The ARNs `Ref` and `Fn::GetAtt` resolve to in the current deployment (for extractStateMachine). */
    readonly physical: PhysicalNames;
    /** The state machine role, as the engine asks for it. */
    readonly engine: EngineIam;
    /** The access key a step's function signs with (its role's, session = its function's name); undefined for a step the template has no function for. */
    credentialsOf(step: string): AccessKey | undefined;
    /** The access key of a role the template names (e.g. an EventBridge target's). */
    roleCredentials(roleId: string): AccessKey;
    /** Decides a call a step's function makes (the seam for calls that reach no endpoint), throwing AccessDeniedException to refuse. */
    authorizeAs(step: string, request: AuthorizationRequest): void;
    /** The resources a step's function is told of in its environment (roles.ts SERVICE_VARIABLES), in the current deployment. */
    servicesOf(step: string): ServiceVariables | undefined;
    /** How many calls were allowed and denied so far. */
    decisions(): IamDecisions;
    /**
     * Deploys another template over this one, as CloudFormation would: its roles' policies replace
     * the old ones at once, versions already published keep their numbers, new ones get the next.
     * Returns the new deployment's physical names.
     */
    deploy(template: CfnTemplateJson): PhysicalNames;
    /** The roles of the current template (the schedule's, the state machine's, each step's). */
    readonly roles: IamAuthorizer['roles'];
}
export declare function twinIam(template: CfnTemplateJson, options?: {
    stateDir?: string;
}): TwinIam;
