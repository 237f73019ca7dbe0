import type { AgentDefinition } from '../../lambdas/define.js';
import type { CfnResource, CfnTemplateJson } from '../template/asl.js';
import { LocalSfnError } from './sfn-error.js';

/**
 * Versions on the local engine, the way AWS holds them. On AWS a deploy publishes a state machine
 * version whose Tasks invoke pinned Lambda versions (each bundling that deploy's agent module),
 * and points the alias at it: new runs start on the alias, live executions finish on the version
 * they started on (infra/agent-state-machine.ts). Locally version N is (the synthesized
 * definition, the step handlers bound to agent module N): `LocalEngine.publishVersion` holds it,
 * `LocalStack.deploy(agentV2)` makes one from a module, and new executions start on the newest.
 * An engine that is never given a second version runs exactly as before (one version, no lookups).
 *
 * AWS's rules for them (Step Functions Developer Guide, "State machine versions",
 * https://docs.aws.amazon.com/step-functions/latest/dg/concepts-state-machine-version.html, and the
 * API reference, https://docs.aws.amazon.com/step-functions/latest/apireference/API_DeleteStateMachineVersion.html):
 * a version's description is at most 256 characters; a version an alias routes to is not deleted
 * (ConflictException: point the alias elsewhere first); a deleted version's executions in progress
 * are not stopped, but nothing starts on it again; its number is never reused.
 */

/** What a published version says about itself (AWS: the state machine version's description, ≤ 256 characters). */
export function versionDescription(agent: Pick<AgentDefinition, 'name' | 'version' | 'compatibleWith'>, codeVersion?: string): string {
  const parts = [`savepoint agent ${agent.name}`, `version ${agent.version ?? '(none)'}`];
  if (agent.compatibleWith?.length) parts.push(`compatible with ${agent.compatibleWith.join(', ')}`);
  if (codeVersion !== undefined) parts.push(`code ${codeVersion}`);
  return parts.join('; ').slice(0, 256);
}

/**
 * DeleteStateMachineVersion's refusal of a version that aliases route to (their ARNs), in the
 * service's words; nothing to refuse when none does.
 */
export function assertNoAliasRoutesTo(referencingAliasArns: readonly string[]): void {
  if (referencingAliasArns.length > 0) {
    throw new LocalSfnError('ConflictException', `Version to be deleted must not be referenced by an alias. Current list of aliases referencing this version: [${referencingAliasArns.join(', ')}]`);
  }
}

/**
 * The state machine's aliases the template declares (`AWS::StepFunctions::StateMachineAlias`
 * names: savepoint's `live`). Each routes to the version the deploy published, so locally each
 * routes to the newest version (LocalEngine's `aliases`).
 */
export function templateAliases(template: CfnTemplateJson, stateMachineLogicalId?: string): string[] {
  const resources = template.Resources ?? {};
  // In a template of several agents, an alias is its machine's: the one its routing's version belongs to.
  const ofMachine = (alias: CfnResource) =>
    stateMachineLogicalId === undefined ||
    ((alias.Properties?.['RoutingConfiguration'] as { StateMachineVersionArn?: { 'Fn::GetAtt'?: [string, string] } }[] | undefined) ?? []).some(
      (route) => (resources[route.StateMachineVersionArn?.['Fn::GetAtt']?.[0] ?? '']?.Properties?.['StateMachineArn'] as { Ref?: string } | undefined)?.Ref === stateMachineLogicalId,
    );
  return Object.values(resources).flatMap((resource) =>
    resource.Type === 'AWS::StepFunctions::StateMachineAlias' && typeof resource.Properties?.['Name'] === 'string' && ofMachine(resource) ? [resource.Properties['Name']] : [],
  );
}
