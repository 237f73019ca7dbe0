import type { ModelClient } from '../records/messages.js';
import type { ModelSpec } from './spec.js';
/**
 * The one entry point to the model providers: a `provider:model-id` spec and a configuration in, a
 * `ModelClient` out, built by the provider's descriptor (providers.ts). Build it once per process
 * (module scope in a Lambda): each adapter holds an SDK client with its connection pool.
 */
export { checkEndpoint, ENV, ModelConfig, modelConfigFromEnv } from './config.js';
export { costOf, DEFAULT_PRICE_TABLE, priceFor, priceTable, type Price, type PriceTable } from './prices.js';
export { formatModelSpec, parseModelSpec, PROVIDERS, type ModelSpec, type Provider } from './spec.js';
export { MODEL_PROVIDERS } from './providers.js';
export { defineProvider, lazyClient, type ProviderContext, type ProviderDescriptor } from './provider.js';
export { providerTable, type ProviderTable } from './provider-table.js';
export { DEFAULT_MODEL_TIMEOUT_MS, MAX_MODEL_TIMEOUT_MS, MAX_TOKENS_PER_TURN, maxTokensWithin } from '../shared/timing.js';
export declare function createModelClient(spec: string | ModelSpec, config: unknown): ModelClient;
