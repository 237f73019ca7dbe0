import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { MessageResponse } from '../lambdas/agent/messages.js';
import type { ModelPolicy } from '../lambdas/define.js';
import { DEFAULT_PRICE_TABLE } from '../lambdas/models/prices.js';
import { faultInjector, type FaultOptions } from './random.js';
import { promptBlocks, toInternal, WireRequestBody } from './wire/anthropic-server.js';
import { conversationProblem } from './wire/conversation.js';
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
  close(): Promise<void>;
  /** Requests received, faulted ones included. */
  requestCount(): number;
}

const MAX_BODY_BYTES = 8 * 1024 * 1024;

/** The token estimate the server bills with: about four characters of JSON per token. */
export function estimateTokens(value: unknown): number {
  return Math.ceil((JSON.stringify(value) ?? '').length / 4);
}

export interface ModelServerOptions {
  policy: ModelPolicy;
  port?: number;
  faults?: FaultOptions;
  /** The shortest prefix a breakpoint caches. @default 1024 tokens (Anthropic's for Sonnet-class models) */
  minCacheableTokens?: number;
}

export async function startModelServer(opts: ModelServerOptions): Promise<ModelServer> {
  const shouldFail = faultInjector(opts.faults);
  const cache = new BreakpointCache({ minTokens: opts.minCacheableTokens ?? MIN_CACHEABLE_TOKENS });
  let requests = 0;
  let faults = 0;

  const server = createServer((req, res) => {
    requests += 1;
    // Faults strike before anything else, as a provider's front door would.
    if (shouldFail()) {
      faults += 1;
      // Alternate so that both throttling answers are exercised, reproducibly per seed.
      if (faults % 2 === 1) sendError(res, 529, 'overloaded_error', 'Overloaded');
      else sendError(res, 429, 'rate_limit_error', 'Rate limited: too many requests');
      req.resume();
      return;
    }
    handle(req, res, opts.policy, cache).catch((error: unknown) => {
      if (!res.headersSent) sendError(res, 500, 'api_error', error instanceof Error ? error.message : 'internal error');
      else res.destroy();
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    requestCount: () => requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // fetch keeps connections alive; without this close() waits for them to idle out.
        server.closeAllConnections();
      }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, decide: ModelPolicy, cache: BreakpointCache): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://localhost').pathname;
  if (req.method !== 'POST' || path !== '/v1/messages') {
    req.resume();
    return sendError(res, 404, 'not_found_error', `no route ${req.method ?? ''} ${path}`);
  }
  if (!header(req, 'x-api-key')) {
    req.resume();
    return sendError(res, 401, 'authentication_error', 'x-api-key header is required');
  }
  if (!header(req, 'anthropic-version')) {
    req.resume();
    return sendError(res, 400, 'invalid_request_error', 'anthropic-version header is required');
  }

  const raw = await readBody(req);
  if (raw === undefined) return sendError(res, 413, 'request_too_large', `request body exceeds ${MAX_BODY_BYTES} bytes`);
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch {
    return sendError(res, 400, 'invalid_request_error', 'request body is not valid JSON');
  }
  const parsed = WireRequestBody.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return sendError(res, 400, 'invalid_request_error', `invalid request: ${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}`);
  }
  const body = parsed.data;
  // The simulator serves the models priced as `sim:<id>`, and no other.
  if (!Object.hasOwn(DEFAULT_PRICE_TABLE.models, `sim:${body.model}`)) return sendError(res, 404, 'not_found_error', `model: ${body.model}`);
  const request = toInternal(body);
  const problem = conversationProblem(request);
  if (problem !== undefined) return sendError(res, 400, 'invalid_request_error', problem);

  const decision = decide(request);
  let content: MessageResponse['content'] = decision.content;
  let stopReason: MessageResponse['stop_reason'] = decision.stop_reason;
  let outputTokens = estimateTokens(content);
  if (outputTokens > request.max_tokens) {
    // Out of budget mid-answer: the text gets cut and no tool call is complete enough to return.
    content = content.flatMap((b) => (b.type === 'text' ? [{ ...b, text: b.text.slice(0, request.max_tokens * 4) }] : []));
    stopReason = 'max_tokens';
    outputTokens = request.max_tokens;
  }
  const cached = cache.account(promptBlocks(body));
  const usage = { input_tokens: cached.input, cache_creation_input_tokens: cached.cacheWrite, cache_read_input_tokens: cached.cacheRead, output_tokens: outputTokens };

  const response: MessageResponse & { stop_sequence: null } = {
    // Derived from the request so that the same request gets the same response, id included.
    id: `msg_${createHash('sha256').update(raw).digest('hex').slice(0, 24)}`,
    type: 'message',
    role: 'assistant',
    model: request.model,
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage,
  };
  send(res, 200, response);
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first.trim() === '' ? undefined : first;
}

/** The body as text, or undefined when it is larger than the limit (read to the end all the same, so the answer can be sent). */
function readBody(req: IncomingMessage): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function sendError(res: ServerResponse, status: number, type: string, message: string): void {
  send(res, status, { type: 'error', error: { type, message } });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
