import { JsonHttpClient, listOf as list, type JsonHttpClientOptions } from 'savepoint';
import { Escalation, KbHit, SentMail, Ticket, TicketSummary, type Queue } from './domain.js';

/**
 * The support-triage agent's providers over HTTP: the helpdesk and the mail provider, as thin
 * routes on savepoint's `JsonHttpClient` (which maps every failure to the error contract). A mail
 * send whose connection is lost after the provider sent it fails as `Agent.Transient`: the retry
 * does not blindly send again, the harness first runs the tool's `reconcile`, which searches sent
 * mail for the key header.
 */

export type HttpClientOptions = JsonHttpClientOptions;

export class HelpdeskClient {
  private readonly http: JsonHttpClient;

  constructor(options: HttpClientOptions) {
    this.http = new JsonHttpClient(options);
  }

  async listTickets(inbox: string, since: string | undefined, signal?: AbortSignal): Promise<TicketSummary[]> {
    const query = since === undefined ? '' : `?since=${encodeURIComponent(since)}`;
    return (await this.http.request('GET', `/v1/inboxes/${encodeURIComponent(inbox)}/tickets${query}`, list(TicketSummary), { signal })).data;
  }

  getTicket(ticketId: string, signal?: AbortSignal): Promise<Ticket> {
    return this.http.request('GET', `/v1/tickets/${encodeURIComponent(ticketId)}`, Ticket, { signal });
  }

  async searchKb(query: string, signal?: AbortSignal): Promise<KbHit[]> {
    return (await this.http.request('GET', `/v1/kb/search?q=${encodeURIComponent(query)}`, list(KbHit), { signal })).data;
  }

  /** Same key + same parameters → the first escalation; same key + other parameters → Terminal. */
  escalate(input: { ticketId: string; queue: Queue; reason: string }, idempotencyKey: string, signal?: AbortSignal): Promise<Escalation> {
    return this.http.request('POST', '/v1/escalations', Escalation, { body: input, idempotencyKey, signal });
  }

  /** Every escalation (for the CLI and tests). */
  async listEscalations(signal?: AbortSignal): Promise<Escalation[]> {
    return (await this.http.request('GET', '/v1/escalations', list(Escalation), { signal })).data;
  }
}

/** The mail provider: no idempotency keys; sent mail can be searched by a custom header instead. */
export class MailClient {
  private readonly http: JsonHttpClient;

  constructor(options: HttpClientOptions) {
    this.http = new JsonHttpClient(options);
  }

  /** Sends one mail. Every call sends one more: a caller that retries must reconcile first. */
  send(mail: { to: string; subject: string; text: string; inReplyTo?: string; headers: Record<string, string> }, signal?: AbortSignal): Promise<SentMail> {
    return this.http.request('POST', '/v1/mail/send', SentMail, { body: mail, signal });
  }

  /** The sent mail carrying `header: value`, oldest first. */
  async findSent(header: string, value: string, signal?: AbortSignal): Promise<SentMail[]> {
    const query = `?header=${encodeURIComponent(header)}&value=${encodeURIComponent(value)}`;
    return (await this.http.request('GET', `/v1/mail/sent${query}`, list(SentMail), { signal })).data;
  }

  /** Every mail sent (for the CLI and tests). */
  async listSent(signal?: AbortSignal): Promise<SentMail[]> {
    return (await this.http.request('GET', '/v1/mail/sent', list(SentMail), { signal })).data;
  }
}
