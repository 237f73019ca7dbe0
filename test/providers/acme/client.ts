import type { ChatCompletion } from 'openai/resources/chat/completions/completions';
import type { MessageRequest, MessageResponse, ModelClient } from '../../../lambdas/records/messages.js';
import { fromChatCompletion, toOpenAIParams } from '../../../lambdas/models/openai.js';
import { errorMessage, retryAfterSeconds, terminal, throttled, transient, type ProviderFault } from '../../../lambdas/models/provider-errors.js';

/**
 * The client file of a new provider, "Acme": an OpenAI-compatible Chat Completions endpoint reached
 * with plain `fetch` (no SDK of its own), the OpenAI wire translation reused. Its error table is
 * `classifyAcmeError`: what a status means, and the remedy an operator reads.
 */
export class AcmeModelClient implements ModelClient {
  constructor(private readonly options: { apiKey: string; baseUrl: string; timeoutMs: number }) {}

  async createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse> {
    let response: Response;
    try {
      response = await fetch(`${this.options.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.options.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(toOpenAIParams(request)),
        signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(this.options.timeoutMs)]) : AbortSignal.timeout(this.options.timeoutMs),
      });
    } catch (error) {
      throw transient({ provider: 'acme', message: `connection error to ${this.options.baseUrl}: ${errorMessage(error)}` }, error);
    }
    const body = (await response.json()) as unknown;
    if (!response.ok) throw classifyAcmeError(response.status, body, response.headers);
    return fromChatCompletion(body as ChatCompletion);
  }
}

/** Acme's error table. */
export function classifyAcmeError(status: number, body: unknown, headers: Headers, now = Date.now()): Error {
  const error = (body as { error?: { message?: string; code?: string | null } }).error;
  const fault: ProviderFault = { provider: 'acme', status, code: error?.code ?? undefined, message: error?.message ?? `HTTP ${status}` };
  if (status === 429 || status === 503) return throttled(fault, retryAfterSeconds(headers, now), body);
  if (status >= 500) return transient(fault, body);
  if (status === 401) return terminal(fault, 'authentication', 'set ACME_API_KEY (locally) to a valid key', body);
  return terminal(fault, 'invalid_request', 'the request was refused as malformed and would be refused again', body);
}
