import type * as z from 'zod';
import { parseOrThrow } from '../shared/validation.js';
import { checkModelTimeout } from '../shared/timing.js';
import { MODEL_PROVIDERS } from './providers.js';

export { checkEndpoint } from './endpoint.js';

/**
 * Where and how to reach each provider: the model timeout, and each provider's part under its name
 * (its descriptor's `config`). Locally it comes from environment variables (`modelConfigFromEnv`);
 * on AWS the caller fills in the API keys from Secrets Manager. Every part is optional here:
 * `createModelClient` checks that the chosen provider's part is present and names the missing setting.
 */
export const ModelConfig = MODEL_PROVIDERS.config;
export type ModelConfig = z.infer<ReturnType<typeof ModelConfig>>;

/** The environment variables read locally besides the providers' own (their descriptors' `env`). */
export const ENV = {
  /** Set by the construct on the model-calling functions (its `models.timeout`). */
  modelTimeout: 'MODEL_TIMEOUT_MS',
} as const;

/** The local configuration, from environment variables (blank counts as unset). */
export function modelConfigFromEnv(env: Record<string, string | undefined> = process.env): ModelConfig {
  const variable = (name: string): string | undefined => (env[name]?.trim() ? env[name].trim() : undefined);
  const timeout = variable(ENV.modelTimeout);
  return parseOrThrow(
    ModelConfig(),
    {
      ...(timeout === undefined ? {} : { timeoutMs: checkModelTimeout(Number(timeout), ENV.modelTimeout) }),
      ...Object.fromEntries(
        MODEL_PROVIDERS.descriptors.flatMap((descriptor) => {
          const part = descriptor.fromEnv(variable);
          return part === undefined ? [] : [[descriptor.name, part]];
        }),
      ),
    },
    'model configuration',
  );
}
