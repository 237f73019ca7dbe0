import type { ModelConfig } from './config.js';

/**
 * Where the providers' API keys come from on AWS: Secrets Manager, by ARN, read by CallModel only
 * (the only function granted `secretsmanager:GetSecretValue` on them) and cached for the life of
 * the container — never an environment variable, a log line or the template. Locally the keys
 * come from environment variables (`modelConfigFromEnv`).
 *
 * `SecretSource` is the port; the Lambda adapter plugs in a reader (Powertools Parameters'
 * `getSecret`, which caches with a max age, once the package is installed).
 */
export type SecretSource = (secretId: string) => Promise<string>;

/** The secrets' ARNs by provider, as infra/ sets them on the CallModel function. */
export interface ModelSecretIds {
  readonly anthropic?: string | undefined;
  readonly openai?: string | undefined;
}

/** Caches each secret once read (a failed read is not cached: the next call tries again). */
export function cachedSecrets(source: SecretSource): SecretSource {
  const cache = new Map<string, Promise<string>>();
  return (id) => {
    let value = cache.get(id);
    if (value === undefined) {
      value = source(id);
      value.catch(() => cache.delete(id));
      cache.set(id, value);
    }
    return value;
  };
}

/** `config` with the API keys read from their secrets (a key set in `config` is kept). */
export async function withSecretKeys(config: ModelConfig, ids: ModelSecretIds, read: SecretSource): Promise<ModelConfig> {
  const key = async (id: string | undefined) => (id === undefined ? undefined : (await read(id)).trim());
  const [anthropic, openai] = await Promise.all([key(ids.anthropic), key(ids.openai)]);
  return {
    ...config,
    ...(anthropic && { anthropic: { ...config.anthropic, apiKey: config.anthropic?.apiKey ?? anthropic } }),
    ...(openai && { openai: { ...config.openai, apiKey: config.openai?.apiKey ?? openai } }),
  };
}
