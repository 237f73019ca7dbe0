import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MessageRequest, type MessageResponse, type Usage } from '../lambdas/agent/messages.js';
import { isPricedModel } from '../lambdas/agent/prices.js';
import { InvalidInputError } from '../lambdas/shared/errors.js';
import { parseOrThrow } from '../lambdas/shared/validation.js';
import type { ModelPolicy } from '../lambdas/define.js';
import { faultInjector, type FaultOptions } from './random.js';

/**
 * The simulated model provider: a real HTTP server speaking the Anthropic Messages wire format,
 * answering with the scripted policy of the agent it serves (`AgentDefinition.dev.policy`). Runs exercise the same client, status codes
 * and error bodies as against a real provider, without a network or a bill.
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

/** Usage of one call: the prompt is the system text, the messages and the tools; the output is the content. */
export function estimateUsage(request: MessageRequest, content: MessageResponse['content']): Usage {
  return {
    input_tokens: estimateTokens({ system: request.system, messages: request.messages, tools: request.tools }),
    output_tokens: estimateTokens(content),
  };
}

export async function startModelServer(opts: { policy: ModelPolicy; port?: number; faults?: FaultOptions }): Promise<ModelServer> {
  const shouldFail = faultInjector(opts.faults);
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
    handle(req, res, opts.policy).catch((error: unknown) => {
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

async function handle(req: IncomingMessage, res: ServerResponse, decide: ModelPolicy): Promise<void> {
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
  let request: MessageRequest;
  try {
    request = parseOrThrow(MessageRequest, json, 'request');
  } catch (error) {
    if (error instanceof InvalidInputError) return sendError(res, 400, 'invalid_request_error', error.message);
    throw error;
  }
  if (!isPricedModel(request.model)) return sendError(res, 404, 'not_found_error', `model: ${request.model}`);

  const decision = decide(request);
  let content: MessageResponse['content'] = decision.content;
  let stopReason: MessageResponse['stop_reason'] = decision.stop_reason;
  const usage = estimateUsage(request, content);
  if (usage.output_tokens > request.max_tokens) {
    // Out of budget mid-answer: the text gets cut and no tool call is complete enough to return.
    content = content.flatMap((b) => (b.type === 'text' ? [{ ...b, text: b.text.slice(0, request.max_tokens * 4) }] : []));
    stopReason = 'max_tokens';
    usage.output_tokens = request.max_tokens;
  }

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
