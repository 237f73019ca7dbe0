/**
 * The identity policies of a synthesized template, wherever they are written: savepoint's roles
 * keep their statements inline (`Policies` of the role: infra/inline-policy-role.ts), a few in an
 * `AWS::IAM::Policy` of their own (a statement on a resource that waits for the role). Tests read a
 * role's grants through this, not through one resource type. The documents are the template's own
 * objects: a test that changes one changes the template.
 */
type Resource = { Type: string; Properties?: Record<string, any> };

export interface IdentityPolicy {
  /** The `AWS::IAM::Policy`'s logical id, or `<role id>/<policy name>` for an inline policy. */
  readonly id: string;
  /** The logical ids of the roles it applies to. */
  readonly roles: readonly string[];
  readonly document: { Statement: any[] };
}

export function identityPolicies(resources: Record<string, Resource>): IdentityPolicy[] {
  return Object.entries(resources).flatMap(([id, resource]): IdentityPolicy[] => {
    if (resource.Type === 'AWS::IAM::Role') {
      return ((resource.Properties?.['Policies'] ?? []) as { PolicyName: string; PolicyDocument: IdentityPolicy['document'] }[]).map((inline) => ({ id: `${id}/${inline.PolicyName}`, roles: [id], document: inline.PolicyDocument }));
    }
    if (resource.Type !== 'AWS::IAM::Policy') return [];
    const roles = ((resource.Properties?.['Roles'] ?? []) as { Ref?: string }[]).flatMap((role) => (role.Ref ? [role.Ref] : []));
    return [{ id, roles, document: resource.Properties!['PolicyDocument'] }];
  });
}

/** Every statement of the role `roleId`'s identity policies. */
export function roleStatements(resources: Record<string, Resource>, roleId: string): any[] {
  return identityPolicies(resources)
    .filter((policy) => policy.roles.includes(roleId))
    .flatMap((policy) => policy.document.Statement);
}

/** The role a function runs as (its `Role`'s `Fn::GetAtt`). */
export function roleOfFunction(resources: Record<string, Resource>, functionId: string): string {
  return (resources[functionId]!.Properties!['Role'] as { 'Fn::GetAtt': [string, string] })['Fn::GetAtt'][0];
}
