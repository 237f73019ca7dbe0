import { type WireReply, type WireServer } from './http.js';
import { type Fault, type Policy } from './policy.js';
/**
 * A strict local Bedrock Runtime Converse API (`POST /model/{modelId}/converse`, HTTP/2 cleartext
 * like the SDK's default handler): checks the SigV4 signature (service `bedrock`, the configured
 * region, `x-amz-date`, known key, signature recomputed), the body's shape (unknown fields refused,
 * one member per content block union, `maxTokens` required), the conversation rules and the model
 * id; answers errors as Bedrock does (`x-amzn-errortype` + `{ message }`), otherwise the policy's
 * reply with usage that models Claude's prompt caching on `cachePoint` blocks.
 */
/** What {@link startBedrockServer} serves. */
export interface BedrockServerOptions {
    /** Decides each accepted request's answer (the server only checks and speaks the wire). */
    policy: Policy;
    /** The region a request must be signed for. */
    region: string;
    /** Access key id → secret access key of the identities the server accepts. */
    credentials: Record<string, string>;
    /** Model ids the server knows; any other is a 400 `ValidationException` ("The provided model identifier is invalid."). */
    models: readonly string[];
    /** The loopback port. @default 0 (a free one; read it from `url`) */
    port?: number;
}
/**
 * Starts a strict Bedrock Runtime Converse API on 127.0.0.1 (HTTP/2 cleartext, as the SDK's default
 * handler speaks) for tests that talk to it with the official `@aws-sdk/client-bedrock-runtime`: the
 * SigV4 signature is checked against the given credentials and region, and a request the real API
 * would refuse is refused as Bedrock does (`x-amzn-errortype` and `{ message }`).
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
export declare function startBedrockServer(options: BedrockServerOptions): Promise<WireServer>;
/** The documented error answers of Converse (https://docs.aws.amazon.com/bedrock/latest/APIReference/API_runtime_Converse.html). */
export declare function bedrockFault(fault: Fault): WireReply;
