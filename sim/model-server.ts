import { createHash } from 'node:crypto';
import type { MessageResponse } from '../lambdas/records/messages.js';
import type { ModelPolicy } from '../lambdas/define.js';
import { DEFAULT_PRICE_TABLE } from '../lambdas/models/prices.js';
import { inProcessFetch, jsonReply, serveHttp, type HttpService, type ServiceReply, type ServiceRequest } from './in-process.js';
import { faultInjector, type FaultOptions } from './random.js';
import { promptBlocks, toInternal, WireRequestBody } from './wire/anthropic-server.js';
import { conversationProblem } from './wire/conversation.js';
import type { KnownValid } from './wire/json-schema.js';
import { BreakpointCache, MIN_CACHEABLE_TOKENS } from './wire/prompt-cache.js';

/**
 * The simulated model provider: a real HTTP server speaking the Anthropic Messages wire format,
 * answering with the scripted policy of the agent it serves (`AgentDefinition.dev.policy`). Runs exercise the same client, status codes
 * and error bodies as against a real provider, without a network or a bill.
 *
 * It models prompt caching as Anthropic bills it (sim/wire/prompt-cache.ts, the same model the
 * strict Anthropic wire server uses): a `cache_control` breakpoint caches the prefix up to it,
 * a later request reads the longest byte-identical cached prefix, and usage reports
 * `cache_creation_input_tokens` and `cache_read_input_tokens` apart from plain input. A request
 * without breakpoints is billed as plain input throughout: the uncached baseline.
 */

export interface ModelServer {
  url: string;
  port: number;
  /**
   * A `fetch` for the model client that answers requests to `url` in process (the same service,
   * no socket: what the local engine's steps use) and sends any other URL to the network.
   */
  fetch: typeof fetch;
  close(): Promise<void>;
  /** Requests received, faulted ones included. */
  requestCount(): number;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;

export function estimateTokens(value: unknown): number {
  return Math.ceil((JSON.stringify(value) ?? '').length / 4);
}

export interface ModelServerOptions {
  policy: ModelPolicy;
  port?: number;
  faults?: FaultOptions;
  /** The shortest prefix a breakpoint caches. @default 1024 tokens (Anthropic's for Sonnet-class models) */
  minCacheableTokens?: number;
  /** Tool schemas found valid before, not checked again (sim/wire/json-schema.ts). @default none: each process checks them once */
  knownSchemas?: KnownValid;
}

export async function startModelServer(opts: ModelServerOptions): Promise<ModelServer> {
  const { service, requestCount } = modelService(opts);
  const served = await serveHttp(service, {
    port: opts.port,
    maxBodyBytes: MAX_BODY_BYTES,
    tooLarge: () => errorReply(413, 'request_too_large', `request body exceeds ${MAX_BODY_BYTES} bytes`),
    failed: (error) => errorReply(500, 'api_error', error instanceof Error ? error.message : 'internal error'),
  });
  return { url: served.url, port: served.port, fetch: inProcessFetch(served.url, service), requestCount, close: served.close };
}

/** The simulated model as a function from request to reply: served over HTTP, or called in process. */
export function modelService(opts: ModelServerOptions): { service: HttpService; requestCount(): number } {
  const shouldFail = faultInjector(opts.faults);
  const cache = new BreakpointCache({ minTokens: opts.minCacheableTokens ?? MIN_CACHEABLE_TOKENS });
  let requests = 0;
  let faults = 0;
  const service: HttpService = async (request) => {
    requests += 1;
    // Faults strike before anything else, as a provider's front door would.
    if (shouldFail()) {
      faults += 1;
      // Alternate so that both throttling answers are exercised, reproducibly per seed.
      return faults % 2 === 1 ? errorReply(529, 'overloaded_error', 'Overloaded') : errorReply(429, 'rate_limit_error', 'Rate limited: too many requests');
    }
    return answer(request, opts.policy, cache, opts.knownSchemas);
  };
  return { service, requestCount: () => requests };
}

function answer(request: ServiceRequest, decide: ModelPolicy, cache: BreakpointCache, knownSchemas: KnownValid | undefined): ServiceReply {
  const path = new URL(request.url, 'http://localhost').pathname;
  if (request.method !== 'POST' || path !== '/v1/messages') return errorReply(404, 'not_found_error', `no route ${request.method} ${path}`);
  if (!header(request, 'x-api-key')) return errorReply(401, 'authentication_error', 'x-api-key header is required');
  if (!header(request, 'anthropic-version')) return errorReply(400, 'invalid_request_error', 'anthropic-version header is required');
  if (Buffer.byteLength(request.body) > MAX_BODY_BYTES) return errorReply(413, 'request_too_large', `request body exceeds ${MAX_BODY_BYTES} bytes`);

  const raw = request.body;
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return errorReply(400, 'invalid_request_error', 'request body is not valid JSON');
  }
  const parsed = WireRequestBody.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return errorReply(400, 'invalid_request_error', `invalid request: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  const body = parsed.data;
  // The simulator serves the models priced as `sim:<id>`, and no other.
  if (!Object.hasOwn(DEFAULT_PRICE_TABLE.models, `sim:${body.model}`)) return errorReply(404, 'not_found_error', `model: ${body.model}`);
  const internal = toInternal(body);
  const problem = conversationProblem(internal, knownSchemas);
  if (problem !== undefined) return errorReply(400, 'invalid_request_error', problem);

  const decision = decide(internal);
  let content: MessageResponse['content'] = decision.content;
  let stopReason: MessageResponse['stop_reason'] = decision.stop_reason;
  let outputTokens = estimateTokens(content);
  if (outputTokens > internal.max_tokens) {
    // Out of budget mid-answer: the text gets cut and no tool call is complete enough to return.
    content = content.flatMap((b) => (b.type === 'text' ? [{ ...b, text: b.text.slice(0, internal.max_tokens * 4) }] : []));
    stopReason = 'max_tokens';
    outputTokens = internal.max_tokens;
  }
  const cached = cache.account(promptBlocks(body));
  const usage = { input_tokens: cached.input, cache_creation_input_tokens: cached.cacheWrite, cache_read_input_tokens: cached.cacheRead, output_tokens: outputTokens };

  const response: MessageResponse & { stop_sequence: null } = {
    // Derived from the request so that the same request gets the same response, id included.
    id: `msg_${createHash('sha256').update(raw).digest('hex').slice(0, 24)}`,
    type: 'message',
    role: 'assistant',
    model: internal.model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  };
  return jsonReply(200, response);
}

function header(request: ServiceRequest, name: string): string | undefined {
  const value = request.headers[name];
  return value === undefined || value.trim() === '' ? undefined : value;
}

function errorReply(status: number, type: string, message: string): ServiceReply {
  return jsonReply(status, { type: 'error', error: { type, message } });
}
