/**
 * The AGPL IAM simulator (`@cloud-copilot/iam-simulate`, a devDependency used only by tests, never
 * by shipped code: test/architecture/licences.test.ts) as the oracle of the twin's evaluator: the
 * decision it gives a request from a role's identity policies, with the KMS key policies of the
 * template (KMS decides on a key's own policy too; every key here delegates to the account's IAM).
 */
import { runSimulation } from '@cloud-copilot/iam-simulate';
import { resolveTemplateValue, type CfnTemplateJson } from '../../local/template/asl.js';
import { LOCAL_ACCOUNT, physicalNames, type DeploymentState } from '../../local/aws/iam/deployment.js';
import type { AuthorizationRequest, PolicyDocument } from '../../local/aws/iam/policy.js';

/** `'Allowed'`, `'ExplicitlyDenied'`, `'ImplicitlyDenied'`; undefined for a request AWS could not make (an action on the wrong resource type, an unknown context key). */
export type IamOracle = (policies: readonly PolicyDocument[], request: AuthorizationRequest) => Promise<string | undefined>;

export function iamOracle(template: CfnTemplateJson, deployment: DeploymentState): IamOracle {
  const physical = physicalNames(template, deployment);
  const keyPolicies = new Map<string, unknown>();
  for (const [id, resource] of Object.entries(template.Resources ?? {})) {
    if (resource.Type !== 'AWS::KMS::Key') continue;
    keyPolicies.set(physical.arn!(id, resource)!, resolveTemplateValue(resource.Properties?.['KeyPolicy'], template, { physical, where: id }));
  }
  return async (policies, request) => {
    const resourcePolicy = keyPolicies.get(request.resource);
    const result = await runSimulation(
      {
        ...(resourcePolicy !== undefined && { resourcePolicy }),
        identityPolicies: policies.map((policy, i) => ({ name: `policy${i}`, policy: policy as never })),
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        request: {
          principal: `arn:aws:sts::${LOCAL_ACCOUNT}:assumed-role/role/session`,
          action: request.action,
          resource: { resource: request.resource, accountId: LOCAL_ACCOUNT },
          contextVariables: { ...request.context } as Record<string, string | string[]>,
        },
      } as never,
      {},
    );
    return result.resultType === 'single' ? result.overallResult : undefined;
  };
}
