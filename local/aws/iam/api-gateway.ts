/**
 * API Gateway's authorization of a REST API request, as the twin decides it from the synthesized
 * template: the method's authorization type (AWS::ApiGateway::Method `AuthorizationType`) and the
 * API's resource policy (AWS::ApiGateway::RestApi `Policy`), evaluated with the caller's identity
 * decision as AWS documents it ("How API Gateway resource policies affect authorization workflow",
 * https://docs.aws.amazon.com/apigateway/latest/developerguide/apigateway-authorization-flow.html):
 *
 *   no authentication (NONE), resource policy attached   only an explicit Allow admits; any Deny refuses
 *   IAM authentication, unsigned request                   403 Missing Authentication Token
 *   IAM authentication + resource policy:
 *     an explicit Deny in either                          refused
 *     caller in the API's account                         the IAM policy OR the resource policy allows (Table A)
 *     caller in another account                           the IAM policy AND the resource policy allow (Table B)
 *   no resource policy                                    NONE admits everyone; IAM: the caller's IAM policy decides
 *
 * The resource policy's statements are the identity evaluator's (policy.ts), after keeping those
 * whose Principal names the caller: `"*"` and `{"AWS": "*"}` everyone, `{"AWS": <arn>}` that
 * principal, `{"AWS": <account or its root>}` every principal of the account. Its condition keys
 * are `aws:PrincipalArn` (the caller's IAM ARN: a role's for its sessions) and `aws:PrincipalAccount`.
 * `execute-api:/…` in a Resource is API Gateway's shorthand for this API's ARN prefix.
 *
 * Then API Gateway invokes the method's Lambda integration, which Lambda allows only if the
 * function's resource-based policy (the template's `AWS::Lambda::Permission`s) grants
 * `lambda:InvokeFunction` to the principal `apigateway.amazonaws.com` with an `AWS:SourceArn` that
 * matches the method's execute-api ARN (`<api>/<stage>/<METHOD>/<path>`) and, when it names one, the
 * account as `AWS:SourceAccount`
 * (https://docs.aws.amazon.com/lambda/latest/dg/services-apigateway.html#apigateway-permissions).
 * Without it the request fails at the integration: the caller gets 500 `{"message":"Internal server error"}`
 * and the execution log "Execution failed due to configuration error: Invalid permissions on Lambda function"
 * (https://repost.aws/knowledge-center/api-gateway-rest-api-lambda-integrations), the function never
 * invoked. An integration that names `Credentials` (a role API Gateway assumes) is decided by that
 * role's policy instead, which the twin does not model (savepoint's APIs name none).
 */
import { resolveTemplateValue, type CfnTemplateJson } from '../../template/asl.js';
import { deploy, LOCAL_ACCOUNT, LOCAL_REGION, physicalNames } from './deployment.js';
import { evaluatePolicies, type Decision, type OneOrMore, type PolicyDocument, type Statement } from './policy.js';

type Principal = '*' | { readonly AWS?: OneOrMore<string> };
type ResourceStatement = Statement & { readonly Principal?: Principal };

/** One REST API of a template: its methods' authorization, its stage and its resource policy. */
export interface RestApiModel {
  readonly logicalId: string;
  readonly stage: string;
  readonly policy?: { readonly Statement: OneOrMore<ResourceStatement> };
  /** `METHOD /path/{param}` → its AuthorizationType. */
  readonly methods: ReadonlyMap<string, string>;
  /**
   * `METHOD /path/{param}` → the Lambda function its integration invokes and the resource-based
   * policy statements that let API Gateway invoke it (AWS::Lambda::Permission), for an integration
   * that invokes one as API Gateway's service principal (no `Credentials`).
   */
  readonly integrations?: ReadonlyMap<string, { readonly functionArn: string; readonly permissions: readonly Statement[] }>;
}

/** The caller API Gateway authenticated (SigV4): the ARN `aws:PrincipalArn` holds, its account, and its own IAM policies' decision on the request. */
export interface ApiCaller {
  readonly principalArn: string;
  readonly account: string;
  readonly identityDecision: Decision;
}

export type ApiDecision = { allowed: true } | { allowed: false; status: 403 | 404 | 500; message: string };

/** What API Gateway answers when its Lambda integration may not be invoked (the log line is its execution log's). */
export const INTEGRATION_PERMISSION_REFUSAL = { status: 500, message: 'Internal server error', log: 'Execution failed due to configuration error: Invalid permissions on Lambda function' } as const;

type Ref = { Ref?: string; 'Fn::GetAtt'?: [string, string] };

/** The REST APIs a template defines. */
export function restApisOf(template: CfnTemplateJson): RestApiModel[] {
  const resources = template.Resources ?? {};
  const physical = physicalNames(template, deploy(template));
  const resolve = (value: unknown) => resolveTemplateValue(value, template, { physical, where: 'a Lambda permission' });
  const functionArnRef = (functionId: string) => ({ 'Fn::GetAtt': [functionId, 'Arn'] });
  /** The function's resource-based policy statements for API Gateway: its AWS::Lambda::Permissions whose principal is API Gateway's. */
  const permissionsOf = (functionId: string): Statement[] =>
    Object.values(resources).flatMap((resource) => {
      const properties = (resource.Properties ?? {}) as Record<string, unknown>;
      if (resource.Type !== 'AWS::Lambda::Permission' || properties['Principal'] !== 'apigateway.amazonaws.com' || functionNamed(properties['FunctionName'], resources) !== functionId) return [];
      const conditions: Record<string, Record<string, string>> = {};
      if (properties['SourceArn'] !== undefined) conditions['ArnLike'] = { 'AWS:SourceArn': String(resolve(properties['SourceArn'])) };
      if (properties['SourceAccount'] !== undefined) conditions['StringEquals'] = { 'AWS:SourceAccount': String(resolve(properties['SourceAccount'])) };
      return [{ Effect: 'Allow', Action: String(properties['Action']), Resource: resolve(functionArnRef(functionId)) as string, ...(Object.keys(conditions).length > 0 && { Condition: conditions }) } as Statement];
    });
  const pathOf = (id: Ref | undefined): string => {
    if (!id || id['Fn::GetAtt']?.[1] === 'RootResourceId') return '';
    const resource = resources[id.Ref ?? '']?.Properties as { PathPart: string; ParentId: Ref } | undefined;
    if (!resource) throw new Error(`API Gateway resource ${JSON.stringify(id)} is not in the template`);
    return `${pathOf(resource.ParentId)}/${resource.PathPart}`;
  };
  return Object.entries(resources)
    .filter(([, resource]) => resource.Type === 'AWS::ApiGateway::RestApi')
    .map(([logicalId, api]) => {
      const methods = new Map<string, string>();
      const integrations = new Map<string, { functionArn: string; permissions: Statement[] }>();
      let stage = 'prod';
      for (const resource of Object.values(resources)) {
        const properties = (resource.Properties ?? {}) as Record<string, any>;
        if (properties['RestApiId']?.Ref !== logicalId) continue;
        const route = `${properties['HttpMethod']} ${pathOf(properties['ResourceId']) || '/'}`;
        if (resource.Type === 'AWS::ApiGateway::Method') methods.set(route, properties['AuthorizationType'] ?? 'NONE');
        const functionId = resource.Type === 'AWS::ApiGateway::Method' && properties['Integration']?.['Credentials'] === undefined ? integrationFunctionOf(properties['Integration']?.['Uri'], resources) : undefined;
        if (functionId !== undefined) integrations.set(route, { functionArn: resolve(functionArnRef(functionId)) as string, permissions: permissionsOf(functionId) });
        if (resource.Type === 'AWS::ApiGateway::Stage' && typeof properties['StageName'] === 'string') stage = properties['StageName'];
      }
      const policy = (api.Properties as { Policy?: RestApiModel['policy'] } | undefined)?.Policy;
      return { logicalId, stage, methods, integrations, ...(policy && { policy }) };
    });
}

/** The ARN API Gateway authorizes a request on: `arn:aws:execute-api:<region>:<account>:<api>/<stage>/<METHOD>/<path>`. */
export function executeApiArn(api: RestApiModel, method: string, path: string): string {
  return `${apiPrefix(api)}${api.stage}/${method}${path}`;
}

const apiPrefix = (api: RestApiModel) => `arn:aws:execute-api:${LOCAL_REGION}:${LOCAL_ACCOUNT}:${api.logicalId}/`;

/** Whether API Gateway lets `caller` (undefined: an unsigned request) call `method path` of `api`. */
export function authorizeApiRequest(api: RestApiModel, request: { method: string; path: string; caller?: ApiCaller }): ApiDecision {
  const { method, path, caller } = request;
  const authorization = methodOf(api, method, path);
  if (authorization === undefined) return { allowed: false, status: 403, message: 'Missing Authentication Token' }; // API Gateway's answer to a route it does not have
  const resource = executeApiArn(api, method, path);
  if (authorization === 'AWS_IAM' && !caller) return { allowed: false, status: 403, message: 'Missing Authentication Token' };
  const who = caller?.principalArn ?? 'anonymous';
  const refused = (why: string): ApiDecision => ({ allowed: false, status: 403, message: `User: ${who} is not authorized to perform: execute-api:Invoke on resource: ${resource}${why}` });
  const resourceDecision = api.policy ? resourcePolicyDecision(api, resource, caller) : undefined;
  if (resourceDecision === 'ExplicitlyDenied') return refused(' with an explicit deny');
  if (authorization !== 'AWS_IAM') {
    // No authentication: with a resource policy, only its explicit Allow admits.
    return resourceDecision === undefined || resourceDecision === 'Allowed' ? { allowed: true } : refused('');
  }
  const identity = caller!.identityDecision;
  if (identity === 'ExplicitlyDenied') return refused(' with an explicit deny');
  if (resourceDecision === undefined) return identity === 'Allowed' ? { allowed: true } : refused('');
  const sameAccount = caller!.account === LOCAL_ACCOUNT;
  const allowed = sameAccount ? identity === 'Allowed' || resourceDecision === 'Allowed' : identity === 'Allowed' && resourceDecision === 'Allowed';
  return allowed ? { allowed: true } : refused('');
}

/**
 * Whether API Gateway may invoke the Lambda function behind `method path` (the function's
 * resource-based policy: the module's comment); true for a method whose integration is no such function.
 */
export function integrationInvokable(api: RestApiModel, method: string, path: string): boolean {
  const integration = routeOf(api.integrations ?? new Map(), method, path);
  if (integration === undefined) return true;
  const request = { action: 'lambda:InvokeFunction', resource: integration.functionArn, context: { 'aws:SourceArn': executeApiArn(api, method, path), 'aws:SourceAccount': LOCAL_ACCOUNT } };
  return evaluatePolicies([{ Statement: [...integration.permissions] }], request) === 'Allowed';
}

/** The function an integration's `Uri` invokes (`arn:…:apigateway:…:lambda:path/…/functions/<function ARN>/invocations`), by its logical id. */
function integrationFunctionOf(uri: unknown, resources: NonNullable<CfnTemplateJson['Resources']>): string | undefined {
  let found: string | undefined;
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (typeof value !== 'object' || value === null) return;
    const getAtt = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
    if (getAtt && resources[getAtt[0]]?.Type === 'AWS::Lambda::Function') found ??= getAtt[0];
    Object.values(value).forEach(walk);
  };
  walk(uri);
  return found;
}

/** The function a permission's FunctionName names: its ARN (`Fn::GetAtt … Arn`), its name (`Ref`) or its logical id. */
function functionNamed(name: unknown, resources: NonNullable<CfnTemplateJson['Resources']>): string | undefined {
  const id = typeof name === 'string' ? name : ((name as { Ref?: string } | undefined)?.Ref ?? (name as { 'Fn::GetAtt'?: [string, string] } | undefined)?.['Fn::GetAtt']?.[0]);
  return id !== undefined && resources[id]?.Type === 'AWS::Lambda::Function' ? id : undefined;
}

/** The AuthorizationType of the method that serves `method path` (path parameters match one segment), or undefined. */
function methodOf(api: RestApiModel, method: string, path: string): string | undefined {
  return routeOf(api.methods, method, path);
}

/** What `routes` (`METHOD /path/{param}` →) holds for the route that serves `method path`. */
function routeOf<T>(routes: ReadonlyMap<string, T>, method: string, path: string): T | undefined {
  for (const [route, authorization] of routes) {
    const [routeMethod, routePath] = route.split(' ') as [string, string];
    if (routeMethod !== method && routeMethod !== 'ANY') continue;
    const pattern = new RegExp(`^${routePath.replace(/[.+^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`);
    if (pattern.test(path)) return authorization;
  }
  return undefined;
}

/** The resource policy's decision for `caller` on `resource`: its statements whose Principal names the caller, evaluated as identity statements are. */
function resourcePolicyDecision(api: RestApiModel, resource: string, caller: ApiCaller | undefined): Decision {
  const statements = listOf(api.policy!.Statement)
    .filter((statement) => principalNames(statement.Principal, caller))
    .map(({ Principal: _principal, ...statement }) => ({ ...statement, ...(statement.Resource !== undefined && { Resource: listOf(statement.Resource).map((r) => expand(api, r)) }) }));
  const document: PolicyDocument = { Statement: statements };
  const context: Record<string, string> = caller ? { 'aws:PrincipalArn': caller.principalArn, 'aws:PrincipalAccount': caller.account } : {};
  return evaluatePolicies([document], { action: 'execute-api:Invoke', resource, context });
}

/** `execute-api:/<stage>/<METHOD>/<path>` is this API's ARN prefix followed by the rest. */
function expand(api: RestApiModel, resource: string): string {
  return resource.startsWith('execute-api:/') ? `${apiPrefix(api)}${resource.slice('execute-api:/'.length)}` : resource;
}

function principalNames(principal: Principal | undefined, caller: ApiCaller | undefined): boolean {
  if (principal === undefined) return false; // a resource policy's statement names its principal
  if (principal === '*') return true;
  return listOf(principal.AWS ?? []).some((named) => {
    if (named === '*') return true;
    if (!caller) return false;
    if (named === caller.account || named === `arn:aws:iam::${caller.account}:root`) return true;
    return named === caller.principalArn;
  });
}

function listOf<T>(value: OneOrMore<T>): readonly T[] {
  return Array.isArray(value) ? (value as readonly T[]) : [value as T];
}

/**
 * A caller of the twin's API as API Gateway sees it, from the principal a local API plays (an IAM
 * ARN): `aws:PrincipalArn` is a user's own ARN, or an assumed role's role ARN — under Identity
 * Center's path for its roles, with no path otherwise (a session ARN does not carry it). It is
 * the account's administrator's stand-in, so its own IAM policies allow the call. Undefined for
 * anything else (the local user, `local:<name>`, whose credential is the loopback API's own).
 */
export function apiCallerOf(principal: string | undefined): ApiCaller | undefined {
  const session = principal && /^arn:(aws[\w-]*):sts::(\d{12}):assumed-role\/([^/]+)\/.+$/.exec(principal);
  if (session) {
    const [, partition, account, role] = session;
    const path = role!.startsWith('AWSReservedSSO_') ? 'aws-reserved/sso.amazonaws.com/' : '';
    return { principalArn: `arn:${partition}:iam::${account}:role/${path}${role}`, account: account!, identityDecision: 'Allowed' };
  }
  const user = principal && /^arn:(aws[\w-]*):iam::(\d{12}):user\/.+$/.exec(principal);
  if (user) return { principalArn: principal!, account: user[2]!, identityDecision: 'Allowed' };
  return undefined;
}

/**
 * The local approval API's check before its handler, as API Gateway's on AWS: for a caller that
 * plays an IAM principal, the template's approval API decides; the local user (no ARN) passes on
 * the loopback credential, as before. Undefined when the template has no REST API with /approvals.
 */
export function localApiAuthorizer(template: CfnTemplateJson): ((method: string, path: string, principal: string | undefined) => ApiDecision) | undefined {
  const api = restApisOf(template).find((candidate) => [...candidate.methods.keys()].some((route) => route.endsWith(' /approvals')));
  if (!api) return undefined;
  return (method, path, principal) => {
    const caller = apiCallerOf(principal);
    const decision = principal !== undefined && caller === undefined ? { allowed: true as const } : authorizeApiRequest(api, { method, path, ...(caller && { caller }) });
    // Admitted, API Gateway invokes the integration: as Lambda's resource policy allows it, or 500.
    if (decision.allowed && !integrationInvokable(api, method, path)) return { allowed: false, status: INTEGRATION_PERMISSION_REFUSAL.status, message: INTEGRATION_PERMISSION_REFUSAL.message };
    return decision;
  };
}
