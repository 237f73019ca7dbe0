import { createHash } from 'node:crypto';
import { stableJson, toolSpecs, type AgentDefinition } from '../define.js';
import type { RequestShape } from '../records/ledger-records.js';

/**
 * What every model request of a run sends besides its conversation, as digests: the system prompt
 * and each tool's spec (name, description, schema, effect). StartRun records it on the run, so that
 * a replay on other code can say which of them changed (`the system prompt changed`) where the
 * run's fingerprint could only say that something did. Digests, not the text: a run record stays
 * small, and what a replay needs is equality.
 */
export type { RequestShape };

const digest = (text: string) => createHash('sha256').update(text).digest('hex').slice(0, 16);

export function requestShape(agent: Pick<AgentDefinition, 'system' | 'tools'>): RequestShape {
  // Once per agent (per tool list and prompt): every run's StartRun asks, and the schemas' stable JSON and digests do not change.
  const known = shapes.get(agent.tools);
  if (known?.system === agent.system) return known.shape;
  const shape = shapeOf(agent);
  shapes.set(agent.tools, { system: agent.system, shape });
  return shape;
}
const shapes = new WeakMap<object, { system: string; shape: RequestShape }>();

function shapeOf(agent: Pick<AgentDefinition, 'system' | 'tools'>): RequestShape {
  const specs = toolSpecs(agent);
  return {
    system: digest(agent.system),
    tools: Object.fromEntries(specs.map((spec, index) => [spec.name, digest(stableJson({ ...spec, effect: agent.tools[index]!.effect }))])),
  };
}

/** What differs between a recorded shape and this code's, in words; empty when nothing does. */
export function shapeChanges(recorded: RequestShape, current: RequestShape): string[] {
  const changes: string[] = [];
  if (recorded.system !== current.system) changes.push('the system prompt changed');
  for (const [name, spec] of Object.entries(current.tools)) {
    const before = recorded.tools[name];
    if (before === undefined) changes.push(`tool ${name} is new`);
    else if (before !== spec) changes.push(`tool ${name}'s description, schema or effect changed`);
  }
  for (const name of Object.keys(recorded.tools)) if (!(name in current.tools)) changes.push(`tool ${name} is gone`);
  if (changes.length === 0 && Object.keys(recorded.tools).join() !== Object.keys(current.tools).join()) changes.push('the tools are offered in another order');
  return changes;
}
