import type { ModelConfig } from './config.js';
import { MODEL_PROVIDERS } from './providers.js';
import type { ProviderTable } from './provider-table.js';

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

/** The secrets' ARNs by provider name (the providers whose descriptor has a `secret`), as infra/ sets them on the CallModel function. */
export type ModelSecretIds = Readonly<Partial<Record<string, string | undefined>>>;

/** The secrets' ARNs from the Lambda environment: each provider's `secret.variable`. */
export function secretIdsFromEnv(env: Readonly<Record<string, string | undefined>>, providers: ProviderTable = MODEL_PROVIDERS): ModelSecretIds {
  return Object.fromEntries(providers.descriptors.flatMap((descriptor) => (descriptor.secret === undefined ? [] : [[descriptor.name, env[descriptor.secret.variable]]])));
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
export async function withSecretKeys(config: ModelConfig, ids: ModelSecretIds, read: SecretSource, providers: ProviderTable = MODEL_PROVIDERS): Promise<ModelConfig> {
  const withSecret = providers.descriptors.filter((descriptor) => descriptor.secret !== undefined);
  const keys = await Promise.all(withSecret.map(async (descriptor) => {
    const id = ids[descriptor.name];
    return id === undefined ? undefined : (await read(id)).trim();
  }));
  const parts = config as Record<string, { apiKey?: string } | undefined>;
  return {
    ...config,
    ...Object.fromEntries(withSecret.flatMap((descriptor, i) => (keys[i] ? [[descriptor.name, { ...parts[descriptor.name], apiKey: parts[descriptor.name]?.apiKey ?? keys[i] }]] : []))),
  };
}
