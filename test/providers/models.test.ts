import { describe, expect, it } from 'vitest';
import { createModelClient, modelConfigFromEnv, parseModelSpec } from '../../lambdas/models/index.js';
import { startModelServer } from '../../sim/model-server.js';
import { startAnthropicServer } from '../../sim/wire/anthropic-server.js';
import { startBedrockServer } from '../../sim/wire/bedrock-server.js';
import type { WireServer } from '../../sim/wire/http.js';
import { startOpenAIServer } from '../../sim/wire/openai-server.js';
import { firstRequest, scriptedPolicy } from './conversation.js';

describe('parseModelSpec', () => {
  it.each([
    ['anthropic:claude-sonnet-4-5', { provider: 'anthropic', model: 'claude-sonnet-4-5' }],
    ['bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0', { provider: 'bedrock', model: 'us.anthropic.claude-haiku-4-5-20251001-v1:0' }],
    ['openai:gpt-5-mini', { provider: 'openai', model: 'gpt-5-mini' }],
    ['sim:savepoint-sim-1', { provider: 'sim', model: 'savepoint-sim-1' }],
  ])('splits %s at its first colon', (spec, expected) => {
    expect(parseModelSpec(spec)).toEqual(expected);
  });

  it.each([
    ['claude-sonnet-4-5', /invalid model spec "claude-sonnet-4-5": expected "provider:model-id"/],
    ['anthropic:', /invalid model spec "anthropic:"/],
    ['anthropic: claude', /invalid model spec "anthropic: claude"/],
    ['gemini:gemini-pro', /unknown provider "gemini"; expected one of sim, anthropic, bedrock, openai/],
    ['', /invalid model spec ""/],
  ])('refuses %j with a message naming it', (spec, message) => {
    expect(() => parseModelSpec(spec)).toThrow(expect.objectContaining({ name: 'Agent.InvalidInput', message: expect.stringMatching(message) }));
  });
});

describe('createModelClient', () => {
  it.each([
    ['anthropic:claude-sonnet-4-5', {}, /needs an Anthropic API key: set ANTHROPIC_API_KEY/],
    ['openai:gpt-5', { openai: {} }, /needs an OpenAI API key: set OPENAI_API_KEY/],
    ['bedrock:us.amazon.nova-pro-v1:0', {}, /needs an AWS region: set AWS_REGION/],
    ['sim:savepoint-sim-1', {}, /needs the simulator’s URL: set MODEL_API_URL/],
    ['mystery:model', {}, /unknown provider "mystery"/],
  ])('refuses %s without what it needs', (spec, config, message) => {
    expect(() => createModelClient(spec, config)).toThrow(expect.objectContaining({ name: 'Agent.InvalidInput', message: expect.stringMatching(message) }));
  });

  it.each([
    ['anthropic:claude-sonnet-4-5', { anthropic: { apiKey: 'k', baseUrl: 'http://api.example.com' } }, /ANTHROPIC_BASE_URL \(anthropic.baseUrl\)=http:\/\/api.example.com is refused: http:\/\/ is allowed only on loopback/],
    ['openai:gpt-5', { openai: { apiKey: 'k', baseUrl: 'http://10.0.0.8:8080/v1' } }, /OPENAI_BASE_URL \(openai.baseUrl\)=http:\/\/10.0.0.8:8080\/v1 is refused/],
    ['bedrock:us.amazon.nova-pro-v1:0', { bedrock: { region: 'us-east-1', endpoint: 'http://bedrock.internal' } }, /BEDROCK_ENDPOINT \(bedrock.endpoint\)=http:\/\/bedrock.internal is refused/],
    ['sim:savepoint-sim-1', { sim: { baseUrl: 'http://sim.example.com', apiKey: 'k' } }, /MODEL_API_URL \(sim.baseUrl\)=http:\/\/sim.example.com is refused/],
    ['anthropic:claude-sonnet-4-5', { anthropic: { apiKey: 'k', baseUrl: 'ftp://127.0.0.1' } }, /scheme must be https/],
  ])('refuses a plain-http endpoint that is not loopback for %s', (spec, config, message) => {
    expect(() => createModelClient(spec, config)).toThrow(expect.objectContaining({ name: 'Agent.InvalidInput', message: expect.stringMatching(message) }));
  });

  it('accepts https anywhere and http on loopback', () => {
    for (const baseUrl of ['https://api.anthropic.com', 'http://127.0.0.1:4010', 'http://localhost:4010', 'http://[::1]:4010']) {
      expect(() => createModelClient('anthropic:claude-sonnet-4-5', { anthropic: { apiKey: 'k', baseUrl } })).not.toThrow();
    }
  });

  it('refuses an unknown configuration field (a typo is not silently ignored)', () => {
    expect(() => createModelClient('anthropic:claude-sonnet-4-5', { anthropic: { apiKey: 'k', baseURL: 'https://x' } })).toThrow(/baseURL/);
  });

  it('builds the configuration from environment variables, blank ones unset', () => {
    const config = modelConfigFromEnv({ ANTHROPIC_API_KEY: 'sk-ant', OPENAI_API_KEY: '  ', AWS_REGION: 'eu-west-1', BEDROCK_ENDPOINT: 'http://127.0.0.1:9' });
    expect(config.anthropic?.apiKey).toBe('sk-ant');
    expect(config.openai?.apiKey).toBeUndefined();
    expect(config.bedrock).toMatchObject({ region: 'eu-west-1', endpoint: 'http://127.0.0.1:9' });
    expect(config.sim).toBeUndefined();
  });

  /** One real call through the factory to each provider's local server. */
  async function oneCall(server: WireServer, spec: string, config: unknown, model: string): Promise<void> {
    try {
      const client = createModelClient(spec, config);
      await expect(client.createMessage(firstRequest(model))).resolves.toMatchObject({ stop_reason: 'tool_use' });
      // The full spec names the model as well; another model is refused before any request.
      await expect(client.createMessage(firstRequest(spec))).resolves.toMatchObject({ stop_reason: 'tool_use' });
      await expect(client.createMessage(firstRequest('some-other-model'))).rejects.toThrow(/request names model some-other-model, but this client is configured for/);
      expect(server.requestCount()).toBe(2);
    } finally {
      await server.close();
    }
  }

  it('reaches each provider through its real SDK', async () => {
    const anthropic = await startAnthropicServer({ policy: scriptedPolicy, apiKey: 'k', models: ['claude-haiku-4-5'] });
    await oneCall(anthropic, 'anthropic:claude-haiku-4-5', { anthropic: { apiKey: 'k', baseUrl: anthropic.url } }, 'claude-haiku-4-5');
    const openai = await startOpenAIServer({ policy: scriptedPolicy, apiKey: 'k', models: ['gpt-5'] });
    await oneCall(openai, 'openai:gpt-5', { openai: { apiKey: 'k', baseUrl: `${openai.url}/v1` } }, 'gpt-5');
    const credentials = { accessKeyId: 'AKIDFACTORY', secretAccessKey: 's' };
    const bedrock = await startBedrockServer({ policy: scriptedPolicy, region: 'us-east-1', credentials: { AKIDFACTORY: 's' }, models: ['us.amazon.nova-pro-v1:0'] });
    await oneCall(bedrock, 'bedrock:us.amazon.nova-pro-v1:0', { bedrock: { region: 'us-east-1', endpoint: bedrock.url, credentials } }, 'us.amazon.nova-pro-v1:0');
  });

  it('reaches the simulator through the existing HTTP client', async () => {
    const sim = await startModelServer({ policy: () => ({ content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' }) });
    try {
      const client = createModelClient('sim:savepoint-sim-1', { sim: { baseUrl: sim.url, apiKey: 'local' } });
      const response = await client.createMessage({ model: 'savepoint-sim-1', max_tokens: 1024, messages: [{ role: 'user', content: 'Reconcile the refunds of 2026-11-01.' }] });
      expect(response.model).toBe('savepoint-sim-1');
      expect(sim.requestCount()).toBe(1);
    } finally {
      await sim.close();
    }
  });
});

/** Issue 20, item 3: the model timeout is a setting, and a turn's max_tokens must fit it. */
describe('the model timeout', () => {
  it('reads MODEL_TIMEOUT_MS (the construct sets it) and refuses one no Lambda step can hold, naming it', () => {
    expect(modelConfigFromEnv({ MODEL_TIMEOUT_MS: '300000' }).timeoutMs).toBe(300_000);
    expect(() => modelConfigFromEnv({ MODEL_TIMEOUT_MS: '900000' })).toThrow(/MODEL_TIMEOUT_MS must be a whole number of milliseconds from 1000 to 885000 .*got 900000/);
  });

  it('refuses a max_tokens the model cannot write within the timeout, before any request, naming maxTokensPerTurn', async () => {
    const anthropic = await startAnthropicServer({ policy: scriptedPolicy, apiKey: 'k', models: ['claude-haiku-4-5'] });
    try {
      const short = createModelClient('anthropic:claude-haiku-4-5', { anthropic: { apiKey: 'k', baseUrl: anthropic.url } });
      await expect(short.createMessage({ ...firstRequest('claude-haiku-4-5'), max_tokens: 64_000 })).rejects.toThrow(
        expect.objectContaining({ name: 'Agent.InvalidInput', message: expect.stringMatching(/maxTokensPerTurn \(max_tokens\) 64000 cannot be written within the model timeout of 60000 ms: at most 2133 tokens fit/) }),
      );
      const long = createModelClient('anthropic:claude-haiku-4-5', { timeoutMs: 600_000, anthropic: { apiKey: 'k', baseUrl: anthropic.url } });
      await expect(long.createMessage({ ...firstRequest('claude-haiku-4-5'), max_tokens: 21_000 })).resolves.toMatchObject({ stop_reason: 'tool_use' });
      expect(anthropic.requestCount()).toBe(1);
    } finally {
      await anthropic.close();
    }
  });
});

describe('maxTokensPerTurn, capped at what fits the longest model timeout', () => {
  it('is refused when an agent is defined with more, naming the field and the value', async () => {
    const { refundReconciler } = await import('../../agents/refund-reconciler/agent.dev.js');
    const { defineAgent } = await import('../../lambdas/define.js');
    expect(() => defineAgent({ ...refundReconciler, budgets: { ...refundReconciler.budgets, maxTokensPerTurn: 64_000 } })).toThrow(
      /defineAgent refund-reconciler: budgets\.maxTokensPerTurn must be a whole number from 1 to 31466 .*got 64000/,
    );
    expect(() => defineAgent({ ...refundReconciler, budgets: { ...refundReconciler.budgets, maxTokensPerTurn: 31_466 } })).not.toThrow();
  });

  it('is refused in a run\'s config above the cap', async () => {
    const { RunConfig } = await import('../../lambdas/records/ledger-records.js');
    expect(RunConfig().safeParse({ maxTokensPerTurn: 64_000 }).success).toBe(false);
    expect(RunConfig().parse({ maxTokensPerTurn: 31_466 }).maxTokensPerTurn).toBe(31_466);
  });
});
