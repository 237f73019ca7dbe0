import { InvalidInputError } from '../shared/errors.js';

/**
 * A model is chosen by configuration as `provider:model-id`, e.g. `anthropic:claude-sonnet-4-5` or
 * `bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0`. Only the first `:` separates: Bedrock ids
 * and ARNs contain colons of their own.
 */

export const PROVIDERS = ['sim', 'anthropic', 'bedrock', 'openai'] as const;
export type Provider = (typeof PROVIDERS)[number];

export interface ModelSpec {
  readonly provider: Provider;
  /** The provider's own model id, sent on the wire as is. */
  readonly model: string;
}

export function parseModelSpec(spec: string): ModelSpec {
  const colon = spec.indexOf(':');
  const provider = colon < 0 ? '' : spec.slice(0, colon);
  const model = colon < 0 ? '' : spec.slice(colon + 1);
  if (colon < 0 || model.trim() === '' || model !== model.trim()) {
    throw new InvalidInputError(
      `invalid model spec ${JSON.stringify(spec)}: expected "provider:model-id" with provider one of ${PROVIDERS.join(', ')} (e.g. "anthropic:claude-sonnet-4-5")`,
    );
  }
  if (!isProvider(provider)) {
    throw new InvalidInputError(
      `invalid model spec ${JSON.stringify(spec)}: unknown provider ${JSON.stringify(provider)}; expected one of ${PROVIDERS.join(', ')}`,
    );
  }
  return { provider, model };
}

export function formatModelSpec(spec: ModelSpec): string {
  return `${spec.provider}:${spec.model}`;
}

function isProvider(value: string): value is Provider {
  return (PROVIDERS as readonly string[]).includes(value);
}
