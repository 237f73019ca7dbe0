/**
 * The twin's IAM, assembled from a synthesized template: each role's policies (roles.ts) decided
 * by the evaluator (policy.ts), each role's own credentials (credentials.ts), and the deployment
 * whose ARNs the template resolves to (deployment.ts). What the engine, the Step Functions
 * endpoint and each local function's SDK clients are given.
 *
 * Enforced: the state machine role's `lambda:InvokeFunction` on the function (or version) ARN a
 * Task invokes (https://docs.aws.amazon.com/service-authorization/latest/reference/list_awslambda.html;
 * a refusal fails the Task as Step Functions reports it: local/engine/lambda-task.ts), its
 * `states:StartExecution` of a distributed Map's child executions (local/aws/sfn-distributed-map.ts), every
 * Step Functions API call a function, the schedule or the CLI makes (local/services/step-functions.ts), every
 * ledger call a function makes, as the DynamoDB request it stands for with its
 * `dynamodb:LeadingKeys` (local/aws/iam/dynamodb.ts, at the ledger's storage layer, on both engines),
 * and the Secrets Manager, KMS, EventBridge and SNS calls the local stand-ins make for a function
 * (local/aws/iam/services.ts), with the KMS keys' key policies and the secrets' resource policies
 * as KMS and Secrets Manager combine them with the role's (local/aws/iam/resource-policies.ts).
 * Not modelled: the Lambda permissions of EventBridge rules, and the model API keys' secrets (local
 * runs use the simulated model, which reads none).
 */
import { randomBytes } from 'node:crypto';
import type { CfnTemplateJson, PhysicalNames } from '../../template/asl.js';
import type { EngineIam } from '../../engine/local-engine.js';
import { IamAuthorizer, type Caller, type IamDecisions } from './authorizer.js';
import { RoleCredentials, type AccessKey } from './credentials.js';
import { deploy, physicalNames, type DeploymentState } from './deployment.js';
import type { AuthorizationRequest } from './policy.js';
import { stackRoles, type ServiceVariables } from './roles.js';
import { LocalLambdaVersions } from '../lambda-versions.js';

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
  deploy(template: CfnTemplateJson, options?: { codeChanged?: boolean }): PhysicalNames;
  /** The deployment's Lambda versions (local/aws/lambda-versions.ts): what ListVersionsByFunction lists, DeleteFunction deletes and an invoke finds. */
  readonly lambda: LocalLambdaVersions;
  /** The roles of the current template (the schedule's, the state machine's, each step's). */
  readonly roles: IamAuthorizer['roles'];
}

/**
 * `agentMachine`: the agent's state machine in a template of several agents (one stack's): its
 * steps are its own functions' and the stack's shared ones (roles.ts `stackRoles`). `shared`: the
 * IAM of another agent of the same deployed template, whose authorizer and credentials this one
 * uses — one account, one IAM: a key one agent's function signs with is known, as its role, to
 * every endpoint of the stack, and refused what its role may not do there.
 */
export function twinIam(template: CfnTemplateJson, options: { stateDir?: string; agentMachine?: string; shared?: TwinIam } = {}): TwinIam {
  let deployment: DeploymentState = deploy(template);
  let current = template;
  const lambda = new LocalLambdaVersions(() => ({ template: current, deployment }));
  let physical = physicalNames(template, deployment);
  // This agent's view of the roles (its steps, its state machine's role); every role's policies are the template's.
  let own = stackRoles(template, deployment, options.agentMachine);
  const authorizer = options.shared?.authorizer ?? new IamAuthorizer(own);
  const credentials = options.shared?.credentials ?? RoleCredentials.open(options.stateDir);
  // Step Functions assumes its role with a random session name, as on AWS.
  const stateMachineSession = randomBytes(16).toString('hex');
  // Each step's caller, made once per deployment (every ledger call is authorized as one).
  let callers = new Map<string, Caller | undefined>();
  const stepCaller = (step: string): Caller | undefined => {
    if (callers.has(step)) return callers.get(step);
    const function_ = own.stepRoles.get(step);
    const caller = function_ && { role: function_.role, session: function_.functionId };
    callers.set(step, caller);
    return caller;
  };
  return {
    authorizer,
    credentials,
    get physical() {
      return physical;
    },
    get roles() {
      return own;
    },
    engine: {
      authorizeInvoke: (functionArn) => {
        const role = own.stateMachineRole;
        if (!role) throw new Error('the template has no state machine role');
        authorizer.authorize({ role, session: stateMachineSession }, { action: 'lambda:InvokeFunction', resource: functionArn });
        // Authorized first, then found (or not), as Lambda answers: 403 before 404.
        lambda.assertInvokable(functionArn);
      },
      // A distributed Map's child executions (local/aws/sfn-distributed-map.ts).
      authorizeStartExecution: (stateMachineArn) => {
        const role = own.stateMachineRole;
        if (!role) throw new Error('the template has no state machine role');
        authorizer.authorize({ role, session: stateMachineSession }, { action: 'states:StartExecution', resource: stateMachineArn });
      },
      decisions: () => authorizer.decisions(),
    },
    credentialsOf: (step) => {
      const caller = stepCaller(step);
      return caller && 'role' in caller ? credentials.of(caller.role, caller.session) : undefined;
    },
    roleCredentials: (roleId) => credentials.of(roleId, randomBytes(16).toString('hex')),
    authorizeAs: (step, request) => {
      const caller = stepCaller(step);
      if (!caller) throw new Error(`the template has no function for step ${step}`);
      authorizer.authorize(caller, request);
    },
    servicesOf: (step) => own.stepRoles.get(step)?.services,
    decisions: () => authorizer.decisions(),
    lambda,
    deploy: (next, deployOptions = {}) => {
      deployment = deploy(next, deployment, deployOptions);
      current = next;
      physical = physicalNames(next, deployment);
      own = stackRoles(next, deployment, options.agentMachine);
      authorizer.replace(own);
      callers = new Map();
      return physical;
    },
  };
}
