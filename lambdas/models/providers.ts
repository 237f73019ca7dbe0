import { anthropicProvider } from './anthropic-provider.js';
import { bedrockProvider } from './bedrock-provider.js';
import { openaiProvider } from './openai-provider.js';
import { providerTable } from './provider-table.js';
import { simProvider } from './sim-provider.js';

/**
 * The built-in model providers, one descriptor each (provider.ts). A new provider is its descriptor
 * file, its client file and its line here; the order is the order messages list them in.
 */
export const MODEL_PROVIDERS = providerTable([simProvider, anthropicProvider, bedrockProvider, openaiProvider]);
