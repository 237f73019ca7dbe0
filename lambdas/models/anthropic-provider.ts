import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { claudePrice } from './price.js';
import { defineProvider, lazyClient } from './provider.js';

/** The provider's part of the configuration (its descriptor's `config`). */
const anthropicConfig = schemaOnFirstUse(() =>
  z.strictObject({ apiKey: z.string().min(1).optional(), baseUrl: z.string().min(1).optional() }),
);

/** Anthropic's Messages API through the official SDK (anthropic.ts; its error table: anthropic-errors.ts). */
export const anthropicProvider = defineProvider({
  name: 'anthropic',
  otelName: 'anthropic',
  config: anthropicConfig,
  env: ['ANTHROPIC_API_KEY', 'ANTHROPIC_BASE_URL'],
  fromEnv: (variable) => ({ apiKey: variable('ANTHROPIC_API_KEY'), baseUrl: variable('ANTHROPIC_BASE_URL') }),
  secret: { variable: 'ANTHROPIC_API_KEY_SECRET_ARN', constructId: 'AnthropicApiKey' },
  // platform.claude.com/docs/en/about-claude/pricing, 5-minute cache writes.
  prices: {
    'claude-opus-4-5': claudePrice(5, 25),
    'claude-opus-4-5-20251101': claudePrice(5, 25),
    'claude-sonnet-4-6': claudePrice(3, 15),
    'claude-sonnet-4-5': claudePrice(3, 15),
    'claude-sonnet-4-5-20250929': claudePrice(3, 15),
    'claude-haiku-4-5': claudePrice(1, 5),
    'claude-haiku-4-5-20251001': claudePrice(1, 5),
  },
  create(config, { timeoutMs, missing, endpoint }) {
    const apiKey = config?.apiKey ?? missing('an Anthropic API key', 'ANTHROPIC_API_KEY', 'the Anthropic API key secret');
    const baseUrl = config?.baseUrl === undefined ? undefined : endpoint(config.baseUrl, 'ANTHROPIC_BASE_URL (anthropic.baseUrl)');
    return lazyClient(async () => new (await import('./anthropic.js')).AnthropicModelClient({ apiKey, baseUrl, timeoutMs }));
  },
});
