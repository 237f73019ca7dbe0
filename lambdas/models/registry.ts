import type { ModelClient } from '../records/messages.js';
import { createModelClient } from './index.js';
import { formatModelSpec, parseModelSpec } from './spec.js';
import type { ModelConfig } from './config.js';

/**
 * The model clients of one process, one per `provider:model-id`, each built on first use and kept
 * for the life of the container: a client holds its SDK's connection pool, and the configuration
 * (on AWS, the API keys read from Secrets Manager) is read once, on the first call that needs it.
 */
export interface ModelRegistry {
  clientFor(spec: string): Promise<ModelClient>;
}

export function modelRegistry(
  config: () => ModelConfig | Promise<ModelConfig>,
  make: (spec: string, config: ModelConfig) => ModelClient = createModelClient,
): ModelRegistry {
  const clients = new Map<string, Promise<ModelClient>>();
  let loaded: Promise<ModelConfig> | undefined;
  return {
    clientFor(spec) {
      const key = formatModelSpec(parseModelSpec(spec));
      let client = clients.get(key);
      if (client === undefined) {
        if (loaded === undefined) {
          loaded = Promise.resolve().then(config);
          // A configuration that could not be read (a secret, say) is read again next time.
          loaded.catch(() => (loaded = undefined));
        }
        client = loaded.then((cfg) => make(key, cfg));
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
