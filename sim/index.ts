/**
 * Building blocks for an agent's simulated world (local runs and tests): seeded faults, a journal,
 * and strict local servers of the model providers' APIs (Anthropic Messages, OpenAI Chat
 * Completions, Bedrock Converse) that the official SDKs talk to over loopback.
 *
 * @example
 * ```ts
 * import Anthropic from '@anthropic-ai/sdk';
 * import { startAnthropicServer } from 'savepoint/sim';
 *
 * const server = await startAnthropicServer({ apiKey: 'sk-test', models: ['claude-haiku-4-5'], policy: () => ({ content: [{ type: 'text', text: 'Hello.' }], stop_reason: 'end_turn' }) });
 * const anthropic = new Anthropic({ apiKey: 'sk-test', baseURL: server.url });
 * ```
 *
 * @packageDocumentation
 */
export { faultInjector, seededRandom, type FaultOptions } from './random.js';
export { openJournal, recoverTornTail, type Journal } from './journal.js';
export { clip } from '../lambdas/shared/text.js';
export { describeToolError, quote, readCalls, readResult, type RecordedCall, type ResultRead } from './conversation.js';
export { DROPPED, jsonReply, parseJsonBody, ProviderApiError, serveProvider, type ServedProvider, type ServiceReply, type ServiceRequest } from './provider-http.js';
export { startAnthropicServer, startBedrockServer, startOpenAIServer } from './wire/servers.js';
export { ANTHROPIC_VERSIONS } from './wire/anthropic-versions.js';
export type { AnthropicServerOptions } from './wire/anthropic-server.js';
export type { OpenAIServerOptions } from './wire/openai-server.js';
export type { BedrockServerOptions } from './wire/bedrock-server.js';
export type { WireServer } from './wire/http.js';
export { FAULT_KINDS, type Fault, type FaultKind, type Policy, type PolicyReply } from './wire/policy.js';
