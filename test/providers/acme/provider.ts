import * as z from 'zod';
import { schemaOnFirstUse } from '../../../lambdas/shared/on-first-use.js';
import { defineProvider, lazyClient } from '../../../lambdas/models/provider.js';

/** The provider's part of the configuration (its descriptor's `config`). */
const acmeConfig = schemaOnFirstUse(() =>
  z.strictObject({ apiKey: z.string().min(1).optional(), baseUrl: z.string().min(1).optional() }),
);

/**
 * The descriptor of a new provider, "Acme" (an OpenAI-compatible endpoint): with its client
 * (client.ts) the whole of what a provider is. In the repository it would be
 * lambdas/models/acme-provider.ts and lambdas/models/acme.ts, and a line in providers.ts.
 */
export const acmeProvider = defineProvider({
  name: 'acme',
  otelName: 'acme',
  config: acmeConfig,
  env: ['ACME_API_KEY', 'ACME_BASE_URL'],
  fromEnv: (variable) => ({ apiKey: variable('ACME_API_KEY'), baseUrl: variable('ACME_BASE_URL') }),
  secret: { variable: 'ACME_API_KEY_SECRET_ARN', constructId: 'AcmeApiKey' },
  prices: { 'acme-1': { inputPerMTok: 0.5, outputPerMTok: 1.5, cacheWritePerMTok: 0.5, cacheReadPerMTok: 0.05 } },
  create(config, { timeoutMs, missing, endpoint }) {
    const apiKey = config?.apiKey ?? missing('an Acme API key', 'ACME_API_KEY', 'the Acme API key secret');
    const baseUrl = endpoint(config?.baseUrl ?? 'https://api.acme.example/v1', 'ACME_BASE_URL (acme.baseUrl)');
    // Loaded on the first call, as the built-in providers load their SDKs.
    return lazyClient(async () => new (await import('./client.js')).AcmeModelClient({ apiKey, baseUrl, timeoutMs: timeoutMs ?? 60_000 }));
  },
});
