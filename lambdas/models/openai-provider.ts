import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { openaiPrice } from './price.js';
import { defineProvider, lazyClient } from './provider.js';

/** The provider's part of the configuration (its descriptor's `config`). */
const openaiConfig = schemaOnFirstUse(() =>
  z.strictObject({
    apiKey: z.string().min(1).optional(),
    baseUrl: z.string().min(1).optional(),
    organization: z.string().min(1).optional(),
    project: z.string().min(1).optional(),
  }),
);

/** OpenAI Chat Completions through the official SDK (openai.ts; its error table: openai-errors.ts). */
export const openaiProvider = defineProvider({
  name: 'openai',
  otelName: 'openai',
  config: openaiConfig,
  env: ['OPENAI_API_KEY', 'OPENAI_BASE_URL'],
  fromEnv: (variable) => ({ apiKey: variable('OPENAI_API_KEY'), baseUrl: variable('OPENAI_BASE_URL') }),
  secret: { variable: 'OPENAI_API_KEY_SECRET_ARN', constructId: 'OpenAIApiKey' },
  // openai.com/api/pricing: no cache writes billed.
  prices: {
    'gpt-5': openaiPrice(1.25, 0.125, 10),
    'gpt-5-mini': openaiPrice(0.25, 0.025, 2),
    'gpt-4.1': openaiPrice(2, 0.5, 8),
    'gpt-4.1-mini': openaiPrice(0.4, 0.1, 1.6),
    'gpt-4o-mini': openaiPrice(0.15, 0.075, 0.6),
  },
  create(config, { timeoutMs, missing, endpoint }) {
    const apiKey = config?.apiKey ?? missing('an OpenAI API key', 'OPENAI_API_KEY', 'the OpenAI API key secret');
    const baseUrl = config?.baseUrl === undefined ? undefined : endpoint(config.baseUrl, 'OPENAI_BASE_URL (openai.baseUrl)');
    const { organization, project } = config ?? {};
    return lazyClient(async () => new (await import('./openai.js')).OpenAIModelClient({ apiKey, baseUrl, organization, project, timeoutMs }));
  },
});
