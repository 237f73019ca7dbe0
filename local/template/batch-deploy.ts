/**
 * The batch template (local/template/batch.ts) as the twin deploys it for one agent. The template
 * is one per process, as a stack's batch state machine is one for its agents; what names the agent
 * is given at deploy time, as CloudFormation takes a parameter:
 *
 *   - its `AgentName` parameter names the item function its role may invoke (local/template/batch-synth.ts
 *     allows `<agent>-batch-item` and its versions, as a DurableAgent allows its own item function);
 *   - its state machine is named `<agent>-batches` (a stack names its own `<stack>-batches`), so the
 *     ARN the engine runs under is the one its role's policies resolve to.
 */
import { agentStateMachineIds, type CfnTemplateJson } from './asl.js';

/** The batch template's parameter that names the agent whose item function its role may invoke. */
export const BATCH_AGENT_PARAMETER = 'AgentName';

/** The name of an agent's batch item function, in the twin. */
export const batchItemFunctionName = (agent: string) => `${agent}-batch-item`;

/** The name of the twin's batch state machine of an agent. */
export const batchStateMachineName = (agent: string) => `${agent}-batches`;

/** `template` (not changed) with the agent's name given to its parameter and its state machine. */
export function deployBatchTemplate(template: CfnTemplateJson, agent: string): CfnTemplateJson {
  const deployed = structuredClone(template);
  const parameter = deployed.Parameters?.[BATCH_AGENT_PARAMETER];
  if (parameter) parameter.Default = agent;
  const id = agentStateMachineIds(deployed.Resources ?? {})[0];
  const machine = id === undefined ? undefined : deployed.Resources![id];
  if (!machine) throw new Error('the batch template has no state machine');
  machine.Properties = { ...machine.Properties, StateMachineName: batchStateMachineName(agent) };
  return deployed;
}
