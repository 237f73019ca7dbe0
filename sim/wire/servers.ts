/**
 * The strict provider servers of `savepoint/sim`, each loaded when one starts. A server's module
 * builds its request schemas (zod, and Ajv for OpenAI's tool schemas) as it loads: more CPU than a
 * whole `savepoint status`, paid by every importer of `savepoint/sim` (an agent's simulated world,
 * which the CLI loads for a run's summary) although most start none.
 */
import type { AnthropicServerOptions } from './anthropic-server.js';
import type { OpenAIServerOptions } from './openai-server.js';
import type { BedrockServerOptions } from './bedrock-server.js';
import type { WireServer } from './http.js';

/**
 * Starts a strict Anthropic Messages API on 127.0.0.1 for tests that talk to it with the official
 * `@anthropic-ai/sdk`: a request the real API would refuse (an unknown field, a tool result that
 * answers no tool call, an unknown model, a wrong key) is refused in the real API's error shape, so
 * a test passes only for what the real API accepts. Streaming (`stream: true`) is served too.
 * Options a plain-JavaScript caller gets wrong (no `apiKey`, `models` not an array, no `policy`, a
 * `port` that is not an integer) are refused at start with a TypeError naming the option and value.
 *
 * @example
 * ```ts
 * import Anthropic from '@anthropic-ai/sdk';
 * import { startAnthropicServer } from 'savepoint/sim';
 *
 * const server = await startAnthropicServer({
 *   apiKey: 'sk-test',
 *   models: ['claude-haiku-4-5'],
 *   policy: () => ({ content: [{ type: 'text', text: 'Hello.' }], stop_reason: 'end_turn' }),
 * });
 * const anthropic = new Anthropic({ apiKey: 'sk-test', baseURL: server.url, maxRetries: 0 });
 * const message = await anthropic.messages.create({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
 * console.log(message.content); // [ { type: 'text', text: 'Hello.' } ]
 * server.failNext(1, { kind: 'overloaded' }); // the next request gets Anthropic's 529
 * await server.close();
 * ```
 */
export async function startAnthropicServer(options: AnthropicServerOptions): Promise<WireServer> {
  return (await import('./anthropic-server.js')).startAnthropicServer(options);
}

/**
 * Starts a strict OpenAI Chat Completions API on 127.0.0.1 for tests that talk to it with the
 * official `openai` SDK: a request the real API would refuse (an unknown field, no token limit, a
 * tool call left unanswered, an unknown model, a wrong key) is refused in OpenAI's error shape. The
 * SDK's base URL is the server's `url` with `/v1`. Streaming is not served: a request with
 * `stream: true` gets a 400 `invalid_request_error` on param `stream` ("this local server serves
 * no streaming: …"), which the SDK raises as `BadRequestError`. Options are checked at start as
 * {@link startAnthropicServer}'s are.
 *
 * @example
 * ```ts
 * import OpenAI from 'openai';
 * import { startOpenAIServer } from 'savepoint/sim';
 *
 * const server = await startOpenAIServer({
 *   apiKey: 'sk-test',
 *   models: ['gpt-5-mini'],
 *   policy: () => ({ content: [{ type: 'text', text: 'Hello.' }], stop_reason: 'end_turn' }),
 * });
 * const openai = new OpenAI({ apiKey: 'sk-test', baseURL: `${server.url}/v1`, maxRetries: 0 });
 * const completion = await openai.chat.completions.create({ model: 'gpt-5-mini', max_completion_tokens: 64, messages: [{ role: 'user', content: 'Hi' }] });
 * console.log(completion.choices[0]?.message.content); // Hello.
 * await server.close();
 * ```
 */
export async function startOpenAIServer(options: OpenAIServerOptions): Promise<WireServer> {
  return (await import('./openai-server.js')).startOpenAIServer(options);
}

/**
 * Starts a strict Bedrock Runtime Converse API on 127.0.0.1 (HTTP/2 cleartext, as the SDK's default
 * handler speaks) for tests that talk to it with the official `@aws-sdk/client-bedrock-runtime`: the
 * SigV4 signature is checked against the given credentials and region, and a request the real API
 * would refuse is refused as Bedrock does (`x-amzn-errortype` and `{ message }`). Streaming is not
 * served: ConverseStream (`ConverseStreamCommand`) gets a 404 `UnknownOperationException` ("this
 * local server serves no streaming: …"). Options are checked at start (`region` and `credentials`
 * too) as {@link startAnthropicServer}'s are.
 *
 * @example
 * ```ts
 * import { BedrockRuntimeClient, ConverseCommand } from '@aws-sdk/client-bedrock-runtime';
 * import { startBedrockServer } from 'savepoint/sim';
 *
 * const model = 'anthropic.claude-haiku-4-5-20251001-v1:0';
 * const server = await startBedrockServer({
 *   region: 'us-east-1',
 *   credentials: { AKIDTEST: 'secret' },
 *   models: [model],
 *   policy: () => ({ content: [{ type: 'text', text: 'Hello.' }], stop_reason: 'end_turn' }),
 * });
 * const bedrock = new BedrockRuntimeClient({
 *   region: 'us-east-1',
 *   endpoint: server.url,
 *   credentials: { accessKeyId: 'AKIDTEST', secretAccessKey: 'secret' },
 *   maxAttempts: 1,
 * });
 * const answer = await bedrock.send(new ConverseCommand({ modelId: model, messages: [{ role: 'user', content: [{ text: 'Hi' }] }], inferenceConfig: { maxTokens: 64 } }));
 * console.log(answer.output?.message?.content); // [ { text: 'Hello.' } ]
 * bedrock.destroy();
 * await server.close();
 * ```
 */
export async function startBedrockServer(options: BedrockServerOptions): Promise<WireServer> {
  return (await import('./bedrock-server.js')).startBedrockServer(options);
}
