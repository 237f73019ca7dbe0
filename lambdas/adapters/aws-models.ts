import { modelConfigFromEnv } from '../models/config.js';
import { modelRegistry } from '../models/registry.js';
import { withSecretKeys } from '../models/secrets.js';
import type { ModelsFactory } from './aws-deps.js';

/**
 * The model clients on AWS: endpoints and the region from the environment, the API keys from
 * Secrets Manager, read once on the first model call and kept for the container's life. Only
 * the handlers of steps that call a model import this module (and so the providers' SDKs).
 */
export const awsModels: ModelsFactory = (env, keys, secrets) => modelRegistry(() => withSecretKeys(modelConfigFromEnv(env), keys, secrets));
