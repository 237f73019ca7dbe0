import { createHash } from 'node:crypto';
import type { AgentDefinition } from './agent.js';
import { toolSpecs } from './tool.js';

/**
 * What a run is bound to: the agent's name, version, prompt, model, tool schemas and effects, and
 * the price table. A resume on a different fingerprint would continue a conversation with an agent
 * that did not start it.
 */
export function agentFingerprint(agent: AgentDefinition, codeVersion: string, priceTableVersion: string): string {
  const material = JSON.stringify({
    codeVersion,
    agent: agent.name,
    version: agent.version ?? '',
    system: agent.system,
    model: agent.model,
    fallbackModel: agent.fallbackModel,
    // A business key changes which calls are one effect (undefined, and so left out, when there is none).
    tools: toolSpecs(agent).map((spec, index) => ({ ...spec, effect: agent.tools[index]!.effect, businessKey: agent.tools[index]!.idempotencyKey?.toString() })),
    prices: priceTableVersion,
    // Only when set, so that the fingerprints of agents without compaction do not change.
    ...(agent.contextWindow && {
      compaction: {
        contextWindow: agent.contextWindow,
        share: agent.compaction?.share,
        keepRecentTurns: agent.compaction?.keepRecentTurns,
        instructions: agent.compaction?.instructions,
        keep: agent.compaction?.keep?.toString(),
      },
    }),
  });
  return createHash('sha256').update(material).digest('hex').slice(0, 16);
}

/** The default run id: the agent's name and a hash of the input, so that the same input is the same run. */
export function defaultRunId(agent: Pick<AgentDefinition, 'name'>, input: unknown): string {
  return `${agent.name}-${createHash('sha256').update(stableJson(input)).digest('hex').slice(0, 12)}`;
}

/** JSON with object keys sorted: equal values, equal text. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${stableJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
