import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { modelConfigFromEnv } from '../../lambdas/models/config.js';
import { DEFAULT_PRICE_TABLE } from '../../lambdas/models/prices.js';
import { providerTable } from '../../lambdas/models/provider-table.js';
import { MODEL_PROVIDERS } from '../../lambdas/models/providers.js';
import { modelRegistry } from '../../lambdas/models/registry.js';
import { secretIdsFromEnv, withSecretKeys } from '../../lambdas/models/secrets.js';
import { ModelThrottledError } from '../../lambdas/shared/errors.js';
import { importSpecifiers, sourceFiles } from '../architecture/import-graph.js';
import { startOpenAIServer } from '../../sim/wire/openai-server.js';
import { acmeProvider } from './acme/provider.js';
import { firstRequest, runConversation, scriptedPolicy } from './conversation.js';

/**
 * Issue 37, item 4: a model provider is one descriptor (lambdas/models/provider.ts) in one table. A
 * new one — "Acme", an OpenAI-compatible endpoint — is two files (acme/provider.ts, acme/client.ts)
 * and this test: put in a table beside the built-in ones, it is parsed, configured from its
 * variables and its secret, priced, and called through the registry against the strict OpenAI wire
 * server on loopback, with its error table answering a throttle.
 */
describe('a new provider, from its descriptor and its client alone', () => {
  const table = providerTable([...MODEL_PROVIDERS.descriptors, acmeProvider]);

  it('is parsed, listed after the built-in providers, and unknown to the built-in table', () => {
    expect(table.parse('acme:acme-1')).toEqual({ provider: 'acme', model: 'acme-1' });
    expect(() => table.parse('gemini:pro')).toThrow(/unknown provider "gemini"; expected one of sim, anthropic, bedrock, openai, acme/);
    expect(() => MODEL_PROVIDERS.parse('acme:acme-1')).toThrow(/unknown provider "acme"/);
  });

  it('is configured from its own variables, its part checked strictly, and its key read from its secret', async () => {
    const env = { ACME_API_KEY: ' ', ACME_BASE_URL: 'http://127.0.0.1:9/v1', ACME_API_KEY_SECRET_ARN: 'arn:aws:secretsmanager:us-east-1:1:secret:acme' };
    const fromEnv = table.config().parse(Object.fromEntries(table.descriptors.flatMap((d) => (d.name === 'acme' ? [[d.name, d.fromEnv((name) => env[name as keyof typeof env]?.trim() || undefined)]] : []))));
    expect(fromEnv).toEqual({ acme: { apiKey: undefined, baseUrl: 'http://127.0.0.1:9/v1' } });
    expect(() => table.config().parse({ acme: { apiKey: 'k', baseURL: 'x' } })).toThrow(/baseURL/);
    const ids = secretIdsFromEnv(env, table);
    expect(ids).toEqual({ anthropic: undefined, openai: undefined, acme: env.ACME_API_KEY_SECRET_ARN });
    expect(await withSecretKeys(fromEnv, ids, async (id) => `key of ${id}\n`, table)).toEqual({ acme: { apiKey: `key of ${env.ACME_API_KEY_SECRET_ARN}`, baseUrl: 'http://127.0.0.1:9/v1' } });
    // The built-in configuration knows nothing of it.
    expect(modelConfigFromEnv(env)).not.toHaveProperty('acme');
  });

  it('is priced from its descriptor', () => {
    const prices = table.prices();
    expect(prices['acme:acme-1']).toEqual(acmeProvider.prices['acme-1']);
    // Every built-in price is there, unchanged and in the same order.
    expect(Object.entries(prices).slice(0, -1)).toEqual(Object.entries(DEFAULT_PRICE_TABLE.models));
  });

  it('carries a tool-using conversation through the registry against the strict OpenAI wire server, and its error table answers a throttle', async () => {
    const server = await startOpenAIServer({ policy: scriptedPolicy, apiKey: 'sk-acme', models: ['acme-1'] });
    try {
      const registry = modelRegistry(() => ({ acme: { apiKey: 'sk-acme', baseUrl: `${server.url}/v1` } }), table);
      const client = await registry.clientFor('acme:acme-1');
      expect(await registry.clientFor('acme:acme-1')).toBe(client);
      const [first, second, third, ...rest] = await runConversation(client, 'acme-1');
      expect(rest).toEqual([]);
      expect(first).toMatchObject({ stop_reason: 'tool_use', content: [{ type: 'tool_use', id: 'call_lookup_1', name: 'lookup_order' }] });
      expect(second?.content.map((block) => block.type)).toEqual(['text', 'tool_use']);
      expect(third).toMatchObject({ stop_reason: 'end_turn', content: [{ type: 'text', text: 'Refunded ord_1: 12.50.' }] });
      expect(server.requestCount()).toBe(3);
      // Bound to its model, as every provider's client is (provider-table.ts boundTo).
      await expect(client.createMessage(firstRequest('acme-2'))).rejects.toThrow(/request names model acme-2, but this client is configured for acme:acme-1/);

      server.failNext(1, { kind: 'rate_limit', retryAfterSeconds: 7 });
      const throttled = await client.createMessage(firstRequest('acme:acme-1')).catch((error: unknown) => error);
      expect(throttled).toBeInstanceOf(ModelThrottledError);
      expect(throttled).toMatchObject({ name: 'Agent.ModelThrottled', retryAfterSeconds: 7, message: expect.stringMatching(/^acme model call failed: 429 rate_limit_exceeded/) });
      const refused = await modelRegistry(() => ({ acme: { apiKey: 'sk-wrong', baseUrl: `${server.url}/v1` } }), table).clientFor('acme:acme-1');
      await expect(refused.createMessage(firstRequest('acme-1'))).rejects.toMatchObject({ name: 'Agent.Terminal', message: expect.stringMatching(/401 invalid_api_key.*\[authentication\] — set ACME_API_KEY/) });
      expect(server.requestCount()).toBe(5);
    } finally {
      await server.close();
    }
  });

  it('is refused without its key, naming the variable, before any request', async () => {
    const registry = modelRegistry(() => ({}), table);
    await expect(registry.clientFor('acme:acme-1')).rejects.toThrow(/model acme:acme-1 needs an Acme API key: set ACME_API_KEY \(locally\) or the Acme API key secret \(on AWS\)/);
  });
});

/**
 * Nothing outside a provider's own files names it: no switch on a provider's name in the harness,
 * the construct, the CLI or the console (the simulator, the harness's own test double, aside).
 */
describe('the provider table is the one place that names a provider', () => {
  // Its client and descriptor files; and the simulator's client, which speaks Anthropic's wire format.
  const own = /^lambdas\/models\/((anthropic|bedrock|openai)(-[a-z]+)?|messages-client)\.ts$/;
  it.each(['anthropic', 'bedrock', 'openai'])('%s appears in code only in its own files', (name) => {
    const named = new RegExp(`['"\`]${name}['"\`]|\\.${name}\\b|${name.toUpperCase()}_`);
    const offenders = sourceFiles(process.cwd(), ['lambdas', 'infra', 'cli', 'console', 'local', 'testing', 'client'])
      .filter((file) => !own.test(file))
      .filter((file) => {
        const text = readFileSync(file, 'utf8');
        const code = text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
        const imports = new Set(importSpecifiers(text));
        return code.split('\n').some((line) => named.test(line) && ![...imports].some((specifier) => line.includes(specifier)));
      });
    expect(offenders).toEqual([]);
  });
});
