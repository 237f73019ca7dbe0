import type { ModelClient } from '../records/messages.js';
import type { ProviderTable } from './provider-table.js';
import type { ModelConfig } from './config.js';
/**
 * The model clients of one process, one per `provider:model-id`, each built on first use and kept
 * for the life of the container: a client holds its SDK's connection pool, and the configuration
 * (on AWS, the API keys read from Secrets Manager) is read once, on the first call that needs it.
 */
export interface ModelRegistry {
    clientFor(spec: string): Promise<ModelClient>;
}
/**
 * `make` builds a client: by default the built-in providers' table (providers.ts); another table
 * (a provider of the caller's own), or a function (tests, scripted models).
 */
export declare function modelRegistry<C = ModelConfig>(config: () => C | Promise<C>, make?: ((spec: string, config: C) => ModelClient) | ProviderTable): ModelRegistry;
/** Every spec answered by one client: tests and scripted models. */
export declare function singleModel(client: ModelClient): ModelRegistry;
/** Each client wrapped from outside (crash and fault injection): the steps have no hooks. */
export declare function wrapModels(registry: ModelRegistry, wrap: (client: ModelClient, spec: string) => ModelClient): ModelRegistry;
