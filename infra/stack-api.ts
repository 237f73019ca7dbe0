import { ArnFormat, Duration, Lazy, Stack, Token } from 'aws-cdk-lib';
import { AccessLogFormat, AuthorizationType, CfnRestApi, LambdaIntegration, LogGroupLogDestination, MethodLoggingLevel, ResponseTransferMode, RestApi } from 'aws-cdk-lib/aws-apigateway';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { ILogGroup } from 'aws-cdk-lib/aws-logs';
import { CfnWebACLAssociation } from 'aws-cdk-lib/aws-wafv2';
import { Construct } from 'constructs';
import type { AgentApiSettings } from '../lambdas/runs/api-settings.js';
import type { PrincipalDirectory } from '../lambdas/approvals/people.js';
import { Steps } from '../lambdas/shared/steps.js';
import { API_GATEWAY_INTEGRATION_TIMEOUT_MS, API_GATEWAY_STREAMING_INTEGRATION_TIMEOUT_MS, LAMBDA_MAX_TIMEOUT_MS } from '../lambdas/shared/limits.js';
import { ApiGatewayAccount } from './api-gateway-account.js';
import { approvalApiPolicy } from './approval-api-policy.js';
import type { LedgerTable } from './ledger-table.js';
import { EVERY_AGENT_STEPS, StepFunction } from './step-function.js';
import { topLevelStack } from './top-level-stack.js';

/** API Gateway's default (and, without a quota increase, longest) integration timeout. */
const API_INTEGRATION_TIMEOUT = Duration.millis(API_GATEWAY_INTEGRATION_TIMEOUT_MS);
/** The approval callback's and the runs function's Lambda timeout: the answer reaches the caller before the integration gives up. */
const API_FUNCTION_TIMEOUT = Duration.seconds(20);
/** The events stream's function: as long as API Gateway lets a stream last (15 minutes, Lambda's longest timeout too). */
const RUN_EVENTS_TIMEOUT = Duration.millis(LAMBDA_MAX_TIMEOUT_MS);
/**
 * Each integration lets API Gateway invoke its function from any method of the API, in one
 * `Lambda::Permission` per function (`scopePermissionToMethod: false`), which leaves out the
 * console's test invoke too: CDK's defaults add two permissions per method.
 */
const INTEGRATION = { timeout: API_INTEGRATION_TIMEOUT, scopePermissionToMethod: false } as const;
/** The stage throttle (the signed routes), and the page's own, per method. */
const API_THROTTLE = { rateLimit: 10, burstLimit: 20 } as const;
export const PAGE_THROTTLE = { rateLimit: 5, burstLimit: 10 } as const;
/** The page's resource path: its method settings and its route are named by it. */
const PAGE_PATH = '/decide/{approvalId}';

/** What the first agent served sets for the whole API (its stage): every later agent must agree. */
export interface ApiStage {
  /** The agent's construct id, which its errors name (`DurableAgent <id>: approvalPage…`). */
  readonly id: string;
  readonly agentName: string;
  readonly approvalPage?: { readonly throttle?: { readonly rateLimit: number; readonly burstLimit: number }; readonly webAclArn?: string };
  /** Whether the stack sets API Gateway's account-wide CloudWatch Logs role. */
  readonly apiGatewayAccount: boolean;
}

/** What the stack's API needs of an agent it serves. */
export interface ApiAgent extends ApiStage {
  readonly agentName: string;
  /** The agent's module: bundled into the API's functions with every other agent's. */
  readonly entry: string;
  /** The agent state machine's ARNs, built from its fixed name. */
  readonly stateMachine: { readonly stateMachine: string; readonly executions: string };
  /** What the deployment set for it that the API acts on (lambdas/adapters/stack-api.ts). */
  readonly settings: AgentApiSettings;
  /** Its people: the API's resource policy lets in everyone's (each function then holds each to its agent). */
  readonly people: { approverPrincipals: PrincipalDirectory; starterPrincipals?: PrincipalDirectory };
}

/**
 * The stack's one REST API (issue 34, "a shared control plane per stack"): the approval API, the
 * runs API (`/runs`, `/runs/{runId}`, `/cancel`, the `/events` stream) and `/batches`, serving
 * every agent of the stack's ledger, on three functions — the approval callback, the runs
 * function and the events function — where each agent used to have an API and the three of its
 * own (30 resources an agent). The routes are those one agent's API had; a start names its agent
 * (`{ agent, input, runId? }`), a run or an approval is its agent's.
 *
 * Why the functions bundle every agent's code rather than read a config of their schemas (an SSM
 * parameter, a ledger item): what a start is checked against is the agent's code — its zod input
 * schema (refinements and transforms that a JSON Schema cannot carry), its `runId` rule, its
 * budgets and model prices — exactly as StartRun checks it, so a request the API accepts is one
 * StartRun accepts and a refused one starts nothing; and infra never loads an agent's module. What
 * the deployment sets per agent (people, approval policy, ceilings, model) is small and is the
 * functions' environment (`AGENT_SETTINGS`, only what differs from the defaults), within Lambda's
 * 4 KB (checked at synth). The alias each start targets is built from the agent's name.
 *
 * Least privilege: the runs function may start and stop only the executions of the stack's agents'
 * state machines, each named by ARN; the callback may answer only their task tokens; the ledger
 * grants are the shared roles' (`runsApi`, `approvalCallback`, `runEvents`) on the stack's ledger.
 */
export class StackApi extends Construct {
  readonly api: RestApi;
  readonly approvalCallback: StepFunction;
  readonly runsApi: StepFunction;
  readonly runEvents: StepFunction;
  readonly #entries: string[] = [];
  readonly #settings: Record<string, AgentApiSettings> = {};
  readonly #people: ApiAgent['people'][] = [];
  readonly #statements: { start: PolicyStatement; stop: PolicyStatement; taskResponse: PolicyStatement };
  readonly #page: { throttle: { rateLimit: number; burstLimit: number }; webAclArn?: string };

  constructor(scope: Construct, id: string, props: { ledger: LedgerTable; logGroup: ILogGroup; accessLogs: ILogGroup; first: ApiStage }) {
    super(scope, id);
    const stack = Stack.of(this);
    const stackName = topLevelStack(this).stackName;
    const { first } = props;
    this.#page = { throttle: first.approvalPage?.throttle ?? PAGE_THROTTLE, ...(first.approvalPage?.webAclArn !== undefined && { webAclArn: first.approvalPage.webAclArn }) };
    // A stage's method setting takes a rate (a Double) and a whole burst (an Integer): CloudFormation
    // refuses another at deploy (Infinity is written as null), as WAF refuses an association with
    // no regional web ACL's ARN (a CloudFront one is global).
    for (const [field, value] of Object.entries(this.#page.throttle)) {
      if (!(typeof value === 'number' && value > 0 && Number.isFinite(value))) throw new Error(`DurableAgent ${first.id}: approvalPage.throttle.${field} must be a positive number, got ${value}`);
      if (field === 'burstLimit' && !Number.isInteger(value)) throw new Error(`DurableAgent ${first.id}: approvalPage.throttle.burstLimit must be a whole number of requests, got ${value}`);
    }
    const webAclArn = this.#page.webAclArn;
    if (webAclArn !== undefined && !Token.isUnresolved(webAclArn) && !/^arn:aws[\w-]*:wafv2:[a-z0-9-]+:\d{12}:regional\/webacl\/[\w-]{1,128}\/[\w-]+$/.test(webAclArn)) {
      throw new Error(`DurableAgent ${first.id}: approvalPage.webAclArn: expected a regional WAFv2 web ACL's ARN (arn:aws:wafv2:<region>:<account>:regional/webacl/<name>/<id>), got ${JSON.stringify(webAclArn)}`);
    }
    const environment = {
      POWERTOOLS_SERVICE_NAME: stackName,
      STATE_MACHINE_ARN_PREFIX: stack.formatArn({ service: 'states', resource: 'stateMachine', resourceName: `${stackName}-`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
      AGENT_SETTINGS: Lazy.string({ produce: () => JSON.stringify(this.#settings) }),
    };
    const fn = (fnId: string, step: typeof Steps.ApprovalCallback | typeof Steps.RunsApi | typeof Steps.RunEvents, timeout: Duration) =>
      new StepFunction(this, fnId, { step, bundledWith: EVERY_AGENT_STEPS, agentEntries: () => this.#entries, timeout, environment, logGroup: props.logGroup });
    // They stop before API Gateway stops waiting (29 s): a caller told 504 must never find the approval decided, or the run started, after all.
    this.approvalCallback = fn('ApprovalCallbackFunction', Steps.ApprovalCallback, API_FUNCTION_TIMEOUT);
    this.runsApi = fn('RunsApiFunction', Steps.RunsApi, API_FUNCTION_TIMEOUT);
    // GET /runs/{runId}/events streams for as long as API Gateway lets a stream last; the function ends it a minute before.
    this.runEvents = fn('RunEventsFunction', Steps.RunEvents, RUN_EVENTS_TIMEOUT);
    props.ledger.grantTo(this.approvalCallback, 'approvalCallback');
    props.ledger.grantTo(this.runsApi, 'runsApi');
    props.ledger.grantTo(this.runEvents, 'runEvents');
    const statement = (actions: string[]) => new PolicyStatement({ actions });
    this.#statements = {
      // A start on an alias is authorized on the state machine's own ARN (Step Functions, "Authorization for versions and aliases").
      start: statement(['states:StartExecution']),
      // A cancel of a run that waits for a person stops its execution at once (lambdas/runs/runs-api.ts).
      stop: statement(['states:StopExecution']),
      taskResponse: statement(['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat']),
    };
    this.runsApi.addToRolePolicy(this.#statements.start);
    this.runsApi.addToRolePolicy(this.#statements.stop);
    this.approvalCallback.addToRolePolicy(this.#statements.taskResponse);

    const api = (this.api = new RestApi(this, 'Api', {
      description: `Runs and approvals of the agents of ${stackName}.`,
      // The account's CloudWatch Logs role is set once per app (ApiGatewayAccount), not per API.
      cloudWatchRole: false,
      deployOptions: {
        stageName: 'v1',
        // People decide approvals and start runs: a few a second is plenty, and bounds what a leaked credential can do.
        throttlingRateLimit: API_THROTTLE.rateLimit,
        throttlingBurstLimit: API_THROTTLE.burstLimit,
        // The open page's methods: limits of their own (method settings override the stage's).
        methodOptions: Object.fromEntries(['GET', 'POST'].map((method) => [`${PAGE_PATH}/${method}`, { throttlingRateLimit: this.#page.throttle.rateLimit, throttlingBurstLimit: this.#page.throttle.burstLimit }])),
        tracingEnabled: true,
        loggingLevel: MethodLoggingLevel.INFO,
        accessLogDestination: new LogGroupLogDestination(props.accessLogs),
        accessLogFormat: AccessLogFormat.jsonWithStandardFields(),
      },
      // Callers sign their requests (SigV4): deciding an approval can move money.
      defaultMethodOptions: { authorizationType: AuthorizationType.IAM },
    }));
    // Only the agents' approvers (starters, on /runs, when every agent names them) may: AWS denies everyone else.
    // Produced at synth, so the people of agents added later are in it.
    (api.node.defaultChild as CfnRestApi).policy = Lazy.any({ produce: () => approvalApiPolicy(mergedPeople(this.#people)) });
    const approvals = new LambdaIntegration(this.approvalCallback, INTEGRATION);
    const approvalsRoute = api.root.addResource('approvals');
    approvalsRoute.addMethod('GET', approvals);
    const approval = approvalsRoute.addResource('{approvalId}');
    approval.addMethod('GET', approvals);
    approval.addMethod('POST', approvals);
    // The approval page: a person with a signed link (the link is the credential; a GET never decides).
    const [decide, approvalId] = PAGE_PATH.slice(1).split('/') as [string, string];
    const page = api.root.addResource(decide).addResource(approvalId);
    page.addMethod('GET', approvals, { authorizationType: AuthorizationType.NONE });
    page.addMethod('POST', approvals, { authorizationType: AuthorizationType.NONE });
    // The runs API (lambdas/adapters/runs-http.ts): start, list, read (long-poll), cancel; batches.
    const runsIntegration = new LambdaIntegration(this.runsApi, INTEGRATION);
    const runs = api.root.addResource('runs');
    runs.addMethod('POST', runsIntegration);
    runs.addMethod('GET', runsIntegration);
    const run = runs.addResource('{runId}');
    run.addMethod('GET', runsIntegration);
    run.addResource('cancel').addMethod('POST', runsIntegration);
    const batches = api.root.addResource('batches');
    batches.addMethod('POST', runsIntegration);
    batches.addResource('{batchId}').addMethod('GET', runsIntegration);
    // GET /runs/{runId}/events: the run's events as Server-Sent Events, streamed by its own
    // function (lambdas/adapters/run-events-lambda.ts) through a Lambda proxy integration with
    // `responseTransferMode: STREAM` (aws-cdk-lib aws-apigateway/lib/integration.d.ts; the
    // integration then invokes with InvokeWithResponseStream), behind the API's IAM authorization
    // and resource policy like the rest of the runs API. API Gateway developer guide, "Stream the
    // integration response for your proxy integrations in API Gateway"
    // (https://docs.aws.amazon.com/apigateway/latest/developerguide/response-transfer-mode.html):
    // REST APIs only, a stream lasts at most 15 minutes, an idle timeout of 5 minutes (regional)
    // or 30 seconds (edge-optimized); lambdas/runs/stream-limits.ts keeps under each. A streamed
    // integration is ended by its own timeout too (lambdas/shared/limits.ts): set to the 15 minutes.
    const streamed = { ...INTEGRATION, timeout: Duration.millis(API_GATEWAY_STREAMING_INTEGRATION_TIMEOUT_MS), responseTransferMode: ResponseTransferMode.STREAM };
    run.addResource('events').addMethod('GET', new LambdaIntegration(this.runEvents, streamed));
    // Execution logging needs the account's CloudWatch Logs role set first.
    if (first.apiGatewayAccount) api.deploymentStage.node.addDependency(ApiGatewayAccount.of(this).account);
    if (this.#page.webAclArn !== undefined) new CfnWebACLAssociation(this, 'ApiWebAcl', { resourceArn: api.deploymentStage.stageArn, webAclArn: this.#page.webAclArn });
  }

  /** Adds `agent` to what the API serves: its code to the functions' bundle, its settings, its people, its state machine to their grants. */
  serve(agent: ApiAgent): void {
    if (agent.agentName in this.#settings) throw new Error(`ControlPlane: agent ${agent.agentName} is served twice by the stack's API`);
    // One API, one stage: its page throttle and web ACL are the stack's, set by its agents alike.
    const throttle = agent.approvalPage?.throttle ?? PAGE_THROTTLE;
    if (JSON.stringify(throttle) !== JSON.stringify(this.#page.throttle) || agent.approvalPage?.webAclArn !== this.#page.webAclArn) {
      throw new Error(`DurableAgent ${agent.id}: approvalPage: the agents of a stack share its API, whose page throttle and web ACL are set by its first agent (${JSON.stringify(this.#page)}): give every agent the same approvalPage`);
    }
    this.#settings[agent.agentName] = agent.settings;
    this.#entries.push(agent.entry);
    this.#people.push(agent.people);
    this.#statements.start.addResources(agent.stateMachine.stateMachine);
    this.#statements.stop.addResources(agent.stateMachine.executions);
    this.#statements.taskResponse.addResources(agent.stateMachine.stateMachine);
  }

  /** The stage's URL of `path` (`/approvals`, `/runs`, `/decide`). */
  urlForPath(path: string): string {
    return this.api.urlForPath(path);
  }
}

/**
 * Every agent's people as one directory each (a person's principals from every agent that names
 * them). Starters only when every agent names its starters: an agent that names none lets anyone
 * IAM lets call the API start its runs, which a resource policy cannot tell from the other agents'
 * starts (the function holds each start to its agent's starters).
 */
function mergedPeople(people: readonly ApiAgent['people'][]): ApiAgent['people'] {
  const merge = (directories: readonly PrincipalDirectory[]): PrincipalDirectory => {
    const merged: Record<string, string[]> = {};
    for (const directory of directories) for (const [person, patterns] of Object.entries(directory)) merged[person] = [...new Set([...(merged[person] ?? []), ...patterns])];
    return merged;
  };
  const starters = people.every((each) => each.starterPrincipals !== undefined) ? merge(people.map((each) => each.starterPrincipals!)) : undefined;
  return { approverPrincipals: merge(people.map((each) => each.approverPrincipals)), ...(starters && { starterPrincipals: starters }) };
}
