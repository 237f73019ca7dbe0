import type { ModelsFactory } from './aws-deps.js';
/**
 * The model clients on AWS: endpoints and the region from the environment, the API keys from
 * Secrets Manager, read once on the first model call and kept for the container's life. Only
 * the handlers of steps that call a model import this module (and so the providers' SDKs).
 */
export declare const awsModels: ModelsFactory;
