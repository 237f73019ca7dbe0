/**
 * The AGPL IAM simulator (`@cloud-copilot/iam-simulate`, a devDependency used only by tests, never
 * by shipped code: test/architecture/licences.test.ts) as the oracle of the twin's evaluator: the
 * decision it gives a request from a role's identity policies, with the resource policies of the
 * template: each KMS key's policy (KMS decides on it first) and each secret's resource policy.
 * `principal` is who calls (a role's name and session): key policies name roles.
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { resolveTemplateValue, type CfnTemplateJson } from '../../local/template/asl.js';
import { LOCAL_ACCOUNT, physicalNames, type DeploymentState } from '../../local/aws/iam/deployment.js';
import type { AuthorizationRequest, PolicyDocument } from '../../local/aws/iam/policy.js';

/** `'Allowed'`, `'ExplicitlyDenied'`, `'ImplicitlyDenied'`; undefined for a request AWS could not make (an action on the wrong resource type, an unknown context key). */
export type IamOracle = (policies: readonly PolicyDocument[], request: AuthorizationRequest, principal?: { readonly role: string; readonly session: string }) => Promise<string | undefined>;

/** `identityOnly`: the identity policies' decision alone (what policy.ts `evaluatePolicies` decides), no resource's own policy. */
export function iamOracle(template: CfnTemplateJson, deployment: DeploymentState, options: { identityOnly?: boolean } = {}): IamOracle {
  const physical = physicalNames(template, deployment);
  const keyPolicies = new Map<string, unknown>();
  for (const [id, resource] of Object.entries(template.Resources ?? {})) {
    if (resource.Type !== 'AWS::KMS::Key') continue;
    keyPolicies.set(physical.arn!(id, resource)!, resolveTemplateValue(resource.Properties?.['KeyPolicy'], template, { physical, where: id }));
  }
  for (const [id, resource] of Object.entries(template.Resources ?? {})) {
    if (resource.Type !== 'AWS::SecretsManager::ResourcePolicy') continue;
    const arn = resolveTemplateValue(resource.Properties?.['SecretId'], template, { physical, where: id }) as string;
    keyPolicies.set(arn, resolveTemplateValue(resource.Properties?.['ResourcePolicy'], template, { physical, where: id }));
  }
  /** A role's ARN as deployed (`role/<path><name>`), or one with no path for a role the template does not hold. */
  const roleArn = (role: string) => {
    const resource = template.Resources?.[role];
    return (resource?.Type === 'AWS::IAM::Role' && physical.arn!(role, resource)) || `arn:aws:iam::${LOCAL_ACCOUNT}:role/${role}`;
  };
  return async (policies, request, caller) => {
    const resourcePolicy = options.identityOnly ? undefined : keyPolicies.get(request.resource);
    const result = await runSimulation(
      {
        ...(resourcePolicy !== undefined && { resourcePolicy }),
        identityPolicies: policies.map((policy, i) => ({ name: `policy${i}`, policy: policy as never })),
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        request: {
          principal: `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/${caller?.role ?? 'role'}/${caller?.session ?? 'session'}`,
          action: request.action,
          resource: { resource: request.resource, accountId: LOCAL_ACCOUNT },
          // What AWS sets for a role's session: its role's ARN, with its path (the twin gives resource policies the same).
          contextVariables: { ...(caller && { 'aws:PrincipalArn': roleArn(caller.role) }), ...request.context } as Record<string, string | string[]>,
        },
      } as never,
      {},
    );
    return result.resultType === 'single' ? result.overallResult : undefined;
  };
}
