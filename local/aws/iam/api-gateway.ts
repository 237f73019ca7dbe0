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
 */
import type { CfnTemplateJson } from '../../template/asl.js';
import { LOCAL_ACCOUNT, LOCAL_REGION } from './deployment.js';
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
}

/** The caller API Gateway authenticated (SigV4): the ARN `aws:PrincipalArn` holds, its account, and its own IAM policies' decision on the request. */
export interface ApiCaller {
  readonly principalArn: string;
  readonly account: string;
  readonly identityDecision: Decision;
}

export type ApiDecision = { allowed: true } | { allowed: false; status: 403 | 404; message: string };

type Ref = { Ref?: string; 'Fn::GetAtt'?: [string, string] };

/** The REST APIs a template defines. */
export function restApisOf(template: CfnTemplateJson): RestApiModel[] {
  const resources = template.Resources ?? {};
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
      let stage = 'prod';
      for (const resource of Object.values(resources)) {
        const properties = (resource.Properties ?? {}) as Record<string, any>;
        if (properties['RestApiId']?.Ref !== logicalId) continue;
        if (resource.Type === 'AWS::ApiGateway::Method') methods.set(`${properties['HttpMethod']} ${pathOf(properties['ResourceId']) || '/'}`, properties['AuthorizationType'] ?? 'NONE');
        if (resource.Type === 'AWS::ApiGateway::Stage' && typeof properties['StageName'] === 'string') stage = properties['StageName'];
      }
      const policy = (api.Properties as { Policy?: RestApiModel['policy'] } | undefined)?.Policy;
      return { logicalId, stage, methods, ...(policy && { policy }) };
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

/** The AuthorizationType of the method that serves `method path` (path parameters match one segment), or undefined. */
function methodOf(api: RestApiModel, method: string, path: string): string | undefined {
  for (const [route, authorization] of api.methods) {
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
    if (principal !== undefined && caller === undefined) return { allowed: true };
    return authorizeApiRequest(api, { method, path, ...(caller && { caller }) });
  };
}
