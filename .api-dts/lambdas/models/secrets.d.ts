import type { ModelConfig } from './config.js';
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
export declare function secretIdsFromEnv(env: Readonly<Record<string, string | undefined>>, providers?: ProviderTable): ModelSecretIds;
/** Caches each secret once read (a failed read is not cached: the next call tries again). */
export declare function cachedSecrets(source: SecretSource): SecretSource;
/** `config` with the API keys read from their secrets (a key set in `config` is kept). */
export declare function withSecretKeys(config: ModelConfig, ids: ModelSecretIds, read: SecretSource, providers?: ProviderTable): Promise<ModelConfig>;
