import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { HttpMessagesClient } from './messages-client.js';
import { claudePrice } from './price.js';
import { defineProvider } from './provider.js';

/** The provider's part of the configuration (its descriptor's `config`). */
const simConfig = schemaOnFirstUse(() =>
  z.strictObject({
    baseUrl: z.string().min(1),
    apiKey: z.string().min(1),
    /** @default true */
    promptCaching: z.boolean().optional(),
    /** The client's fetch: the local engine reaches the simulator in process (sim/in-process.ts). @default globalThis.fetch */
    fetch: z.custom<typeof fetch>((value) => typeof value === 'function', 'must be a fetch function').optional(),
  }),
);

/**
 * The savepoint simulator (sim/): the Anthropic Messages wire format over plain HTTP, no SDK. Its
 * client is small and loaded with the table; on AWS the stack serves its URL as a parameter.
 */
export const simProvider = defineProvider({
  name: 'sim',
  otelName: 'savepoint.sim',
  config: simConfig,
  env: ['MODEL_API_URL', 'MODEL_API_KEY'],
  fromEnv: (variable) => {
    const baseUrl = variable('MODEL_API_URL');
    return baseUrl === undefined ? undefined : { baseUrl, apiKey: variable('MODEL_API_KEY') ?? 'local' };
  },
  // The simulator bills like a Sonnet-class model, so that budgets behave realistically.
  prices: { 'savepoint-sim-1': claudePrice(3, 15) },
  create(config, { timeoutMs, missing, endpoint }) {
    if (config === undefined) return missing('the simulator’s URL', 'MODEL_API_URL', 'the stack’s simulator endpoint');
    const baseUrl = endpoint(config.baseUrl, 'MODEL_API_URL (sim.baseUrl)');
    return new HttpMessagesClient({
      baseUrl,
      apiKey: config.apiKey,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(config.promptCaching === undefined ? {} : { promptCaching: config.promptCaching }),
      ...(config.fetch && { fetch: config.fetch }),
    });
  },
});
