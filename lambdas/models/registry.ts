import type { ModelClient } from '../records/messages.js';
import { formatModelSpec } from './provider-table.js';
import type { ProviderTable } from './provider-table.js';
import { MODEL_PROVIDERS } from './providers.js';
import { parseModelSpec } from './spec.js';
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
export function modelRegistry<C = ModelConfig>(
  config: () => C | Promise<C>,
  make: ((spec: string, config: C) => ModelClient) | ProviderTable = MODEL_PROVIDERS,
): ModelRegistry {
  const build = typeof make === 'function' ? make : (spec: string, cfg: C) => make.create(spec, cfg);
  const parse = typeof make === 'function' ? parseModelSpec : make.parse;
  const clients = new Map<string, Promise<ModelClient>>();
  let loaded: Promise<C> | undefined;
  return {
    clientFor(spec) {
      const key = formatModelSpec(parse(spec));
      let client = clients.get(key);
      if (client === undefined) {
        if (loaded === undefined) {
          loaded = Promise.resolve().then(config);
          // A configuration that could not be read (a secret, say) is read again next time.
          loaded.catch(() => (loaded = undefined));
        }
        client = loaded.then((cfg) => build(key, cfg));
        // A failed build (a missing key, say) is not cached: the next call tries again.
        client.catch(() => clients.delete(key));
        clients.set(key, client);
      }
      return client;
    },
  };
}

/** Every spec answered by one client: tests and scripted models. */
export function singleModel(client: ModelClient): ModelRegistry {
  return { clientFor: async () => client };
}

/** Each client wrapped from outside (crash and fault injection): the steps have no hooks. */
export function wrapModels(registry: ModelRegistry, wrap: (client: ModelClient, spec: string) => ModelClient): ModelRegistry {
  const wrapped = new Map<string, Promise<ModelClient>>();
  return {
    clientFor(spec) {
      let client = wrapped.get(spec);
      if (client === undefined) {
        client = registry.clientFor(spec).then((inner) => wrap(inner, spec));
        client.catch(() => wrapped.delete(spec));
        wrapped.set(spec, client);
      }
      return client;
    },
  };
}
