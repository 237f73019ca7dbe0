import * as z from 'zod';

/**
 * The support-triage agent's world as its providers serve it: a helpdesk (the inbox's tickets, a
 * knowledge base, an escalation queue) and a mail provider (replies sent, searchable by header).
 * These schemas validate what comes back from the providers, the sample inbox file, and what the
 * simulated model reads. Money is integer cents.
 */

export const IsoDateTime = z.iso.datetime({ offset: true });
/** A day (YYYY-MM-DD, from its midnight UTC) or an instant: where an inbox listing starts. */
export const Since = z.union([z.iso.date(), IsoDateTime]);
export const Cents = z.number().int().nonnegative();
export const TicketId = z.string().regex(/^tkt_[a-z0-9]{1,32}$/, 'expected a ticket id like tkt_001');

/** The helpdesk's own sentiment estimate of the customer's message (as Zendesk and Front provide). */
export const Sentiment = z.enum(['positive', 'neutral', 'negative', 'angry']);
export type Sentiment = z.infer<typeof Sentiment>;

/** Where a person picks an escalated ticket up. */
export const Queue = z.enum(['tier2', 'billing', 'legal']);
export type Queue = z.infer<typeof Queue>;

export const Ticket = z.object({
  id: TicketId,
  inbox: z.string().min(1),
  from: z.email(),
  name: z.string().min(1),
  subject: z.string(),
  body: z.string(),
  receivedAt: IsoDateTime,
  sentiment: Sentiment,
  /** The order the ticket is about, if any: its value decides whether a reply needs approval. */
  orderId: z.string().min(1).optional(),
  orderValueCents: Cents.optional(),
});
export type Ticket = z.infer<typeof Ticket>;

/** What the inbox listing shows of a ticket (the body is fetched one ticket at a time). */
export const TicketSummary = Ticket.pick({ id: true, from: true, subject: true, receivedAt: true });
export type TicketSummary = z.infer<typeof TicketSummary>;

export const KbArticle = z.object({
  id: z.string().min(1),
  title: z.string().min(1),
  url: z.url(),
  /** What a reply quotes. */
  answer: z.string().min(1),
  keywords: z.array(z.string().min(1)).min(1),
});
export type KbArticle = z.infer<typeof KbArticle>;

/** A search hit: the article and how well it matched (the share of its keywords found, 0-1). */
export const KbHit = KbArticle.extend({ score: z.number().min(0).max(1) });
export type KbHit = z.infer<typeof KbHit>;

/** A mail the provider sent. `headers` are the custom headers the sender set (e.g. X-Savepoint-Key). */
export const SentMail = z.object({
  id: z.string().min(1),
  to: z.email(),
  subject: z.string(),
  text: z.string(),
  inReplyTo: z.string().optional(),
  headers: z.record(z.string(), z.string()),
  sentAt: IsoDateTime,
});
export type SentMail = z.infer<typeof SentMail>;

export const Escalation = z.object({
  id: z.string().min(1),
  ticketId: TicketId,
  queue: Queue,
  reason: z.string(),
  createdAt: IsoDateTime,
});
export type Escalation = z.infer<typeof Escalation>;

/** The sample inbox file: what the simulated helpdesk serves. */
export const Inbox = z.object({
  inbox: z.string().min(1),
  tickets: z.array(Ticket),
  kb: z.array(KbArticle),
});
export type Inbox = z.infer<typeof Inbox>;

/** The custom mail header that carries a send's idempotency key, so sent mail can be searched by it. */
export const KEY_HEADER = 'X-Savepoint-Key';
