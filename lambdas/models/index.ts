import { HttpMessagesClient } from './messages-client.js';
import type { MessageRequest, MessageResponse, ModelClient } from '../records/messages.js';
import { InvalidInputError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import { checkEndpoint, ENV, ModelConfig } from './config.js';
import { formatModelSpec, parseModelSpec, type ModelSpec } from './spec.js';
import { checkMaxTokensFit, DEFAULT_MODEL_TIMEOUT_MS } from '../shared/timing.js';

/**
 * The one entry point to the model providers: a `provider:model-id` spec and a configuration in, a
 * `ModelClient` out. Build it once per process (module scope in a Lambda): each adapter holds an
 * SDK client with its connection pool.
 */

export { checkEndpoint, ENV, ModelConfig, modelConfigFromEnv } from './config.js';
export { costOf, DEFAULT_PRICE_TABLE, priceFor, priceTable, type Price, type PriceTable } from './prices.js';
export { formatModelSpec, parseModelSpec, PROVIDERS, type ModelSpec, type Provider } from './spec.js';
export { DEFAULT_MODEL_TIMEOUT_MS, MAX_MODEL_TIMEOUT_MS, MAX_TOKENS_PER_TURN, maxTokensWithin } from '../shared/timing.js';

export function createModelClient(spec: string | ModelSpec, config: unknown): ModelClient {
  const model = typeof spec === 'string' ? parseModelSpec(spec) : spec;
  const cfg = parseOrThrow(ModelConfig, config, 'model configuration');
  const timeoutMs = cfg.timeoutMs;
  const name = formatModelSpec(model);
  const bound = (spec: ModelSpec, client: ModelClient) => boundTo(spec, timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS, client);
  const missing = (what: string, variable: string, onAws: string): never => {
    throw new InvalidInputError(`model ${name} needs ${what}: set ${variable} (locally) or ${onAws} (on AWS)`);
  };

  switch (model.provider) {
    case 'sim': {
      if (cfg.sim === undefined) return missing('the simulator’s URL', ENV.simUrl, 'the stack’s simulator endpoint');
      const baseUrl = checkEndpoint(cfg.sim.baseUrl, `${ENV.simUrl} (sim.baseUrl)`);
      return bound(model, new HttpMessagesClient({ baseUrl, apiKey: cfg.sim.apiKey, ...(timeoutMs === undefined ? {} : { timeoutMs }), ...(cfg.sim.promptCaching === undefined ? {} : { promptCaching: cfg.sim.promptCaching }), ...(cfg.sim.fetch && { fetch: cfg.sim.fetch }) }));
    }
    case 'anthropic': {
      const apiKey = cfg.anthropic?.apiKey ?? missing('an Anthropic API key', ENV.anthropicKey, 'the Anthropic API key secret');
      const baseUrl = cfg.anthropic?.baseUrl === undefined ? undefined : checkEndpoint(cfg.anthropic.baseUrl, `${ENV.anthropicUrl} (anthropic.baseUrl)`);
      return bound(model, lazy(async () => new (await import('./anthropic.js')).AnthropicModelClient({ apiKey, baseUrl, timeoutMs })));
    }
    case 'openai': {
      const apiKey = cfg.openai?.apiKey ?? missing('an OpenAI API key', ENV.openaiKey, 'the OpenAI API key secret');
      const baseUrl = cfg.openai?.baseUrl === undefined ? undefined : checkEndpoint(cfg.openai.baseUrl, `${ENV.openaiUrl} (openai.baseUrl)`);
      const { organization, project } = cfg.openai ?? {};
      return bound(model, lazy(async () => new (await import('./openai.js')).OpenAIModelClient({ apiKey, baseUrl, organization, project, timeoutMs })));
    }
    case 'bedrock': {
      const b = cfg.bedrock;
      const region = b?.region ?? missing('an AWS region', ENV.region, 'the Lambda’s region');
      const endpoint = b?.endpoint === undefined ? undefined : checkEndpoint(b.endpoint, `${ENV.bedrockEndpoint} (bedrock.endpoint)`);
      return bound(model, lazy(async () => new (await import('./bedrock.js')).BedrockModelClient({ region, endpoint, credentials: b?.credentials, promptCaching: b?.promptCaching, timeoutMs })));
    }
  }
}

/**
 * A client whose SDK is loaded on its first call: a process (or a Lambda function) that never
 * calls a provider never pays for loading its SDK. The configuration was checked already.
 */
function lazy(load: () => Promise<ModelClient>): ModelClient {
  let client: Promise<ModelClient> | undefined;
  return {
    createMessage(request, signal) {
      client ??= load();
      return client.then((loaded) => loaded.createMessage(request, signal));
    },
  };
}

/**
 * The client for one configured model: the request's `model` must name it — its provider id, or
 * the full spec — so that a ledger recorded for one model is never silently sent to another; and
 * its `max_tokens` (the run's `maxTokensPerTurn`) must fit the model timeout, or the call would be
 * cut off every time (lambdas/shared/timing.ts).
 */
function boundTo(spec: ModelSpec, timeoutMs: number, client: ModelClient): ModelClient {
  const full = formatModelSpec(spec);
  return {
    createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse> {
      if (request.model !== spec.model && request.model !== full) {
        return Promise.reject(new InvalidInputError(`request names model ${request.model}, but this client is configured for ${full}`));
      }
      try {
        checkMaxTokensFit(request.max_tokens, timeoutMs, 'maxTokensPerTurn (max_tokens)');
      } catch (error) {
        return Promise.reject(error);
      }
      return client.createMessage({ ...request, model: spec.model }, signal);
    },
  };
}
