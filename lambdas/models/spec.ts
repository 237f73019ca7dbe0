import { formatModelSpec, type ModelSpec as AnyModelSpec } from './provider-table.js';
import { MODEL_PROVIDERS } from './providers.js';

/**
 * A model is chosen by configuration as `provider:model-id`, e.g. `anthropic:claude-sonnet-4-6` or
 * `bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0`. Only the first `:` separates: Bedrock ids
 * and ARNs contain colons of their own. The providers are the table's (providers.ts).
 */

export const PROVIDERS = MODEL_PROVIDERS.names;
export type Provider = (typeof PROVIDERS)[number];
export type ModelSpec = AnyModelSpec<Provider>;

export function parseModelSpec(spec: string): ModelSpec {
  return MODEL_PROVIDERS.parse(spec);
}

export { formatModelSpec };
