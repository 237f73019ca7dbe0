import { type WireReply, type WireServer } from './http.js';
import { type Fault, type Policy } from './policy.js';
/**
 * A strict local OpenAI Chat Completions API (`POST /v1/chat/completions`): checks
 * `Authorization: Bearer`, the body's shape (unknown fields refused, a token limit required), the
 * roles, that every `tool` message answers a `tool_calls` entry of the assistant message before it
 * and that every call is answered, the tool schemas and the model id; answers errors in OpenAI's
 * shape (`{ error: { message, type, param, code } }`), otherwise the policy's reply with
 * `cached_tokens` from automatic prefix caching (see prompt-cache.ts).
 */
/** What {@link startOpenAIServer} serves. */
export interface OpenAIServerOptions {
    /** Decides each accepted request's answer (the server only checks and speaks the wire). */
    policy: Policy;
    /** The one bearer key the server accepts; any other is a 401 `invalid_api_key`. */
    apiKey: string;
    /** Model ids the server knows; any other is a 404 `model_not_found`. */
    models: readonly string[];
    /** The loopback port. @default 0 (a free one; read it from `url`) */
    port?: number;
}
/**
 * Starts a strict OpenAI Chat Completions API on 127.0.0.1 for tests that talk to it with the
 * official `openai` SDK: a request the real API would refuse (an unknown field, no token limit, a
 * tool call left unanswered, an unknown model, a wrong key) is refused in OpenAI's error shape. The
 * SDK's base URL is the server's `url` with `/v1`.
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
export declare function startOpenAIServer(options: OpenAIServerOptions): Promise<WireServer>;
/** The documented error answers (https://platform.openai.com/docs/guides/error-codes). */
export declare function openAIFault(fault: Fault): WireReply;
