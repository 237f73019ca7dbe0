import * as z from 'zod';
import { parseOrThrow } from 'savepoint';
import { faultInjector, openJournal, DROPPED, jsonReply, parseJsonBody, ProviderApiError, serveProvider, type FaultOptions, type ServiceReply, type ServiceRequest } from 'savepoint/sim';
import { Escalation, Inbox, KbHit, Queue, SentMail, Since, Ticket, TicketId, TicketSummary } from '../domain.js';

/**
 * The support-triage agent's outside world, served over real HTTP on loopback so the agent's
 * clients, timeouts and retries run for real. Two providers share one port:
 *
 * - a **helpdesk** (tickets of an inbox, a knowledge-base search, an escalation queue). Creating an
 *   escalation takes an `Idempotency-Key` like Zendesk's ticket API: a replay returns the first one.
 * - a **mail provider** with **no idempotency key**, like most real ones: every `POST` sends one
 *   more mail. What it offers instead is a search of sent mail by a custom header, which is what
 *   the agent's `reconcile` uses to find out whether an earlier attempt went out.
 *
 * Both commit (journal) before they answer, so a lost response still means the mail went out.
 * Injected transient faults (503) strike before anything is done; the opt-in `dropSendResponses`
 * sends the mail and then drops the connection: the case `reconcile` exists for.
 */

export interface MailServerOptions {
  /** What the helpdesk serves: the inbox's tickets and the knowledge base. */
  readonly inbox: Inbox;
  /** JSON-lines journal of the mail sent and escalations created; replayed on start. In memory when absent. */
  readonly dataFile?: string;
  /** Transient 503s before any work is done. Inspection routes are never faulted. */
  readonly faults?: FaultOptions;
  /** Sends that commit and then drop the connection instead of answering: seeded, or chosen per mail. */
  readonly dropSendResponses?: FaultOptions | ((mail: SentMail) => boolean);
  /**
   * Sees every request's route before it is handled, and holds the request until it returns
   * (tests use it to act at a known point of a run, e.g. to kill it while a tool call is running).
   */
  readonly onRequest?: (route: string) => void | Promise<void>;
  /**
   * A provider that commits late: a mail goes out when the provider receives it, but shows in the
   * search of sent mail (what `reconcile` reads) only this long after, on `now`. @default 0
   */
  readonly commitDelayMs?: number;
  /** @default 0 (a random free port) */
  readonly port?: number;
  /** Clock for `sentAt` / `createdAt`. @default () => new Date() */
  readonly now?: () => Date;
}

export interface MailServer {
  /** e.g. `http://127.0.0.1:54321` (no trailing slash) */
  readonly url: string;
  /** Reaches this server in process (no socket); other URLs go to the network. */
  readonly fetch: typeof fetch;
  /** What opening the journal repaired (a torn last line cut off), for the operator to be told. */
  readonly recovered?: string;
  /** Every mail the provider sent, oldest first (a send repeated by a client is two mails). */
  sent(): SentMail[];
  escalations(): Escalation[];
  /** How many mails went out per value of a custom header (e.g. per idempotency key). */
  sentCountBy(header: string): Map<string, number>;
  /** Every HTTP request received, faulted ones included. */
  requestCount(): number;
  /** An outage: while on, every faultable request fails with 503. */
  setOutage(on: boolean): void;
  close(): Promise<void>;
}

const HeaderName = z.string().regex(/^x-[a-z0-9-]{1,64}$/i, 'custom headers are X-… names');
const SendBody = z
  .object({
    to: z.email(),
    subject: z.string().min(1).max(300),
    text: z.string().min(1).max(20_000),
    inReplyTo: z.string().min(1).optional(),
    headers: z.record(HeaderName, z.string().max(500)).default({}),
  })
  .strict();
const EscalateBody = z.object({ ticketId: TicketId, queue: Queue, reason: z.string().min(1).max(1000) }).strict();

const JournalEntry = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('mail'), record: SentMail }),
  z.object({ kind: z.literal('escalation'), key: z.string(), fingerprint: z.string(), record: Escalation }),
]);
type JournalEntry = z.infer<typeof JournalEntry>;

export async function startMailServer(options: MailServerOptions): Promise<MailServer> {
  const inbox = parseOrThrow(Inbox, options.inbox, 'inbox');
  const now = options.now ?? (() => new Date());
  const injectFault = faultInjector(options.faults);
  const drop = typeof options.dropSendResponses === 'function' ? options.dropSendResponses : dropper(options.dropSendResponses);
  const journal = openJournal(options.dataFile, JournalEntry);
  const tickets = new Map(inbox.tickets.map((ticket) => [ticket.id, ticket]));
  const sent: SentMail[] = [];
  const escalations: Escalation[] = [];
  const escalationsByKey = new Map<string, Extract<JournalEntry, { kind: 'escalation' }>>();
  const remember = (entry: JournalEntry) => {
    if (entry.kind === 'mail') sent.push(entry.record);
    else {
      escalations.push(entry.record);
      escalationsByKey.set(entry.key, entry);
    }
  };
  journal.entries.forEach(remember);
  let requests = 0;
  let outage = false;

  function commit(entry: JournalEntry): void {
    journal.append(entry); // committed before the answer: a response lost after this still sent
    remember(entry);
  }

  async function handle(request: ServiceRequest): Promise<ServiceReply | typeof DROPPED> {
    requests += 1;
    const url = new URL(request.url, 'http://127.0.0.1');
    const route = `${request.method} ${url.pathname}`;
    const raw = request.body;
    await options.onRequest?.(route);

    // What was sent and escalated is for people and tests; faulting it would disturb the seed's sequence.
    const inspection = (route === 'GET /v1/mail/sent' && !url.searchParams.has('header')) || route === 'GET /v1/escalations';
    if (!inspection && outage) throw new ProviderApiError(503, 'api_error', 'provider outage');
    if (!inspection && injectFault()) throw new ProviderApiError(503, 'api_error', 'injected transient failure');

    const list = /^GET \/v1\/inboxes\/([^/]+)\/tickets$/.exec(route);
    if (list) {
      const name = decodeURIComponent(list[1] ?? '');
      if (name !== inbox.inbox) throw new ProviderApiError(404, 'invalid_request_error', `No such inbox: '${name}'`);
      const sinceText = url.searchParams.get('since');
      const since = sinceText === null ? undefined : parseOrThrow(Since, sinceText, 'since');
      const data = inbox.tickets
        .filter((ticket) => since === undefined || Date.parse(ticket.receivedAt) >= Date.parse(since))
        .map((ticket) => TicketSummary.parse(ticket));
      return jsonReply(200, { data });
    }
    const ticket = /^GET \/v1\/tickets\/([^/]+)$/.exec(route);
    if (ticket) {
      const id = decodeURIComponent(ticket[1] ?? '');
      const found: Ticket | undefined = tickets.get(id);
      if (!found) throw new ProviderApiError(404, 'invalid_request_error', `No such ticket: '${id}'`);
      return jsonReply(200, found);
    }
    if (route === 'GET /v1/kb/search') {
      const query = url.searchParams.get('q') ?? '';
      if (query.trim().length === 0) throw new ProviderApiError(400, 'invalid_request_error', 'q: a search needs words');
      return jsonReply(200, { data: searchKb(inbox, query) });
    }
    if (route === 'GET /v1/escalations') return jsonReply(200, { data: escalations });
    if (route === 'POST /v1/escalations') {
      const body = parseOrThrow(EscalateBody, parseJsonBody(raw), 'escalation body');
      const key = request.headers['idempotency-key'];
      if (typeof key !== 'string' || key.length === 0 || key.length > 255) {
        throw new ProviderApiError(400, 'invalid_request_error', 'Idempotency-Key: header is required (1 to 255 characters)');
      }
      const fingerprint = JSON.stringify([body.ticketId, body.queue, body.reason]);
      const previous = escalationsByKey.get(key);
      if (previous) {
        if (previous.fingerprint !== fingerprint) throw new ProviderApiError(422, 'idempotency_error', `key '${key}' was first used with other parameters`);
        return jsonReply(200, previous.record, { 'Idempotent-Replayed': 'true' });
      }
      if (!tickets.has(body.ticketId)) throw new ProviderApiError(404, 'invalid_request_error', `No such ticket: '${body.ticketId}'`);
      const record: Escalation = { id: `esc_${String(escalations.length + 1).padStart(4, '0')}`, ...body, createdAt: now().toISOString() };
      commit({ kind: 'escalation', key, fingerprint, record });
      return jsonReply(200, record);
    }

    if (route === 'GET /v1/mail/sent') {
      const header = url.searchParams.get('header');
      if (header === null) return jsonReply(200, { data: sent });
      const name = parseOrThrow(HeaderName, header, 'header');
      const value = url.searchParams.get('value');
      if (value === null) throw new ProviderApiError(400, 'invalid_request_error', 'value: a header search needs a value');
      const committed = (mail: SentMail) => Date.parse(mail.sentAt) + (options.commitDelayMs ?? 0) <= now().getTime();
      return jsonReply(200, { data: sent.filter((mail) => headerOf(mail, name) === value && committed(mail)) });
    }
    if (route === 'POST /v1/mail/send') {
      const body = parseOrThrow(SendBody, parseJsonBody(raw), 'mail');
      // No idempotency key: this provider sends whatever it is given, as often as it is given it.
      const record: SentMail = { id: `msg_${String(sent.length + 1).padStart(4, '0')}`, ...body, sentAt: now().toISOString() };
      commit({ kind: 'mail', record });
      if (drop(record)) {
        return DROPPED;
      }
      return jsonReply(200, record);
    }
    throw new ProviderApiError(404, 'invalid_request_error', `Unrecognized request URL (${route})`);
  }

  const { port, close, fetch } = await serveProvider(handle, { port: options.port, journal });

  return {
    url: `http://127.0.0.1:${port}`,
    fetch,
    ...(journal.recovered && { recovered: journal.recovered }),
    sent: () => [...sent],
    escalations: () => [...escalations],
    sentCountBy: (header) => {
      const counts = new Map<string, number>();
      for (const mail of sent) {
        const value = headerOf(mail, header);
        if (value !== undefined) counts.set(value, (counts.get(value) ?? 0) + 1);
      }
      return counts;
    },
    requestCount: () => requests,
    setOutage: (on) => {
      outage = on;
    },
    close,
  };
}

/**
 * The knowledge-base search: an article scores the share of its keywords found in the query
 * (case-insensitive); the three best with any match, best first, ties by id.
 */
export function searchKb(inbox: Pick<Inbox, 'kb'>, query: string): KbHit[] {
  const text = query.toLowerCase();
  return inbox.kb
    .map((article) => ({ ...article, score: round(article.keywords.filter((word) => text.includes(word.toLowerCase())).length / article.keywords.length) }))
    .filter((hit) => hit.score > 0)
    .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1))
    .slice(0, 3)
    .map((hit) => KbHit.parse(hit));
}

/** Header names are case-insensitive in mail, as in HTTP. */
function headerOf(mail: SentMail, name: string): string | undefined {
  const found = Object.entries(mail.headers).find(([key]) => key.toLowerCase() === name.toLowerCase());
  return found?.[1];
}

function dropper(options: FaultOptions | undefined): (mail: SentMail) => boolean {
  const next = faultInjector(options);
  return () => next();
}

function round(value: number): number {
  return Math.round(value * 100) / 100;
}
