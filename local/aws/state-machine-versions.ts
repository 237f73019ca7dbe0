import type { AgentDefinition } from '../../lambdas/define.js';
import type { CfnTemplateJson } from '../template/asl.js';

/**
 * Versions on the local engine, the way AWS holds them. On AWS a deploy publishes a state machine
 * version whose Tasks invoke pinned Lambda versions (each bundling that deploy's agent module),
 * and points the alias at it: new runs start on the alias, live executions finish on the version
 * they started on (infra/agent-state-machine.ts). Locally version N is (the synthesized
 * definition, the step handlers bound to agent module N): `LocalEngine.publishVersion` holds it,
 * `LocalStack.deploy(agentV2)` makes one from a module, and new executions start on the newest.
 * An engine that is never given a second version runs exactly as before (one version, no lookups).
 */

/** What a published version says about itself (AWS: the state machine version's description, ≤ 256 characters). */
export function versionDescription(agent: Pick<AgentDefinition, 'name' | 'version' | 'compatibleWith'>, codeVersion?: string): string {
  const parts = [`savepoint agent ${agent.name}`, `version ${agent.version ?? '(none)'}`];
  if (agent.compatibleWith?.length) parts.push(`compatible with ${agent.compatibleWith.join(', ')}`);
  if (codeVersion !== undefined) parts.push(`code ${codeVersion}`);
  return parts.join('; ').slice(0, 256);
}

/**
 * The state machine's aliases the template declares (`AWS::StepFunctions::StateMachineAlias`
 * names: savepoint's `live`). Each routes to the version the deploy published, so locally each
 * routes to the newest version (LocalEngine's `aliases`).
 */
export function templateAliases(template: CfnTemplateJson): string[] {
  return Object.values(template.Resources ?? {}).flatMap((resource) =>
    resource.Type === 'AWS::StepFunctions::StateMachineAlias' && typeof resource.Properties?.['Name'] === 'string' ? [resource.Properties['Name']] : [],
  );
}
