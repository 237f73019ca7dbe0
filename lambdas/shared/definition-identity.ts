import { createHash } from 'node:crypto';

/**
 * The identity of a state machine definition as deployed: a hash of its rendered
 * `DefinitionString` (the CloudFormation value, references unresolved) with StartRun's own
 * `definition.hash` field left empty. The state machine carries it in StartRun's payload
 * (infra/agent-state-machine.ts), so StartRun learns it without a Step Functions call.
 */
export function definitionIdentity(rendered: unknown): string {
  return createHash('sha256').update(JSON.stringify(rendered)).digest('hex').slice(0, 16);
}

/** The `"hash":"…"` field StartRun's payload carries, as it appears inside the rendered definition's text. */
const HASH_FIELD = /\\"hash\\":\\"([0-9a-f]{16})?\\"/;

/**
 * The rendered definition with its identity computed anew: for a template renamed after it was
 * synthesized (local/template/synthesize.ts), whose embedded hash is still the old definition's.
 */
export function reidentified(rendered: unknown): unknown {
  const text = JSON.stringify(rendered);
  if (!HASH_FIELD.test(text)) return rendered;
  const blank = text.replace(HASH_FIELD, '\\"hash\\":\\"\\"');
  const identity = definitionIdentity(JSON.parse(blank));
  return JSON.parse(blank.replace(HASH_FIELD, `\\"hash\\":\\"${identity}\\"`));
}
