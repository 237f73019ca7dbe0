import { defineAgent, defineTool, InvalidInputError, parseOrThrow, type ToolTrace } from 'savepoint';
import * as z from 'zod';
import { Cents, KEY_HEADER, Queue, Sentiment, Since, TicketId, type SentMail } from './domain.js';
import { HelpdeskClient, MailClient } from './http-clients.js';

/**
 * The support triage agent: savepoint's second example agent, and a different kind of agent from
 * the refund reconciler. It reads an inbox's tickets, searches the knowledge base, and either
 * *sends* a reply by mail or escalates the ticket to a person's queue. Its mail provider, like
 * most, has no idempotency keys, so `send_reply` declares a `reconcile`: every reply carries its
 * idempotency key in a mail header, and a retried send first searches sent mail for it. A reply to
 * an angry customer, or about an order above a threshold, waits for a person's approval. It uses
 * only the public API (`savepoint`); the harness imports none of it.
 */

export const TriageRunInput = z
  .object({
    /** The mailbox / queue whose tickets are triaged. */
    inbox: z.string().min(1).max(200),
    /** Only tickets received from then on (a day or an instant). @default every ticket */
    since: Since.optional(),
  })
  .strict();

/** Replies about an order above this value wait for a person: policy, in the agent's code, never in a run's input. */
export const APPROVAL_THRESHOLD_CENTS = 100_000;
export type TriageRunInput = z.output<typeof TriageRunInput>;

interface Deps {
  helpdesk: HelpdeskClient;
  mail: MailClient;
}

const Environment = z.object({ HELPDESK_API_URL: z.url(), MAIL_API_URL: z.url() });

const listTickets = defineTool({
  name: 'list_tickets',
  description: "Lists an inbox's tickets (id, sender, subject, time), oldest first; optionally only those received since a day or an instant.",
  input: z.object({ inbox: z.string().min(1).max(200), since: Since.optional() }).strict(),
  effect: 'read',
  execute: async (args, { deps, signal }) => ({ tickets: await (deps as Deps).helpdesk.listTickets(args.inbox, args.since, signal) }),
});

const getTicket = defineTool({
  name: 'get_ticket',
  description: "Fetches a ticket: the customer's message, the helpdesk's sentiment estimate and the order it is about.",
  input: z.object({ ticketId: TicketId }).strict(),
  effect: 'read',
  execute: (args, { deps, signal }) => (deps as Deps).helpdesk.getTicket(args.ticketId, signal),
});

const searchKb = defineTool({
  name: 'search_kb',
  description: 'Searches the knowledge base; returns up to three articles with a match score from 0 to 1, best first.',
  input: z.object({ query: z.string().min(1).max(500) }).strict(),
  effect: 'read',
  execute: async (args, { deps, signal }) => ({ articles: await (deps as Deps).helpdesk.searchKb(args.query, signal) }),
});

const SendReplyArgs = z
  .object({
    ticketId: TicketId,
    to: z.email(),
    subject: z.string().min(1).max(300),
    body: z.string().min(1).max(5000),
    /** As the ticket says: the approval rule reads it, and `execute` refuses a reply that understates it. */
    customerSentiment: Sentiment,
    /** The ticket's order value (0 when none), for the same reason. */
    orderValueCents: Cents,
  })
  .strict();
type SendReplyArgs = z.output<typeof SendReplyArgs>;

/** What a sent reply looks like to the model and the ledger, whether `execute` or `reconcile` found it. */
function replyResult(ticketId: string, mail: SentMail) {
  return { messageId: mail.id, ticketId, to: mail.to, subject: mail.subject, sentAt: mail.sentAt };
}

const sendReply = defineTool<SendReplyArgs, TriageRunInput, Deps>({
  name: 'send_reply',
  description:
    "Sends a reply to a ticket's customer by mail. Sends for real: call once per ticket. Copy the ticket's sentiment and order value; a reply to an angry customer or about a large order waits for a person's approval.",
  input: SendReplyArgs,
  effect: 'write',
  // No `idempotencyKeys`: the mail provider has none (a second POST is a second mail). Instead, a
  // send whose outcome is unknown is looked for in sent mail, and sent again only if it is not
  // there `settleMs` after it was sent: how late this provider shows a sent mail in its search (its
  // simulator at once: sim/mail-server.ts). Without a settle time the call would be escalated.
  settleMs: 1_000,
  reconcile: async (args, { deps, idempotencyKey, signal }) => {
    const [earlier] = await deps.mail.findSent(KEY_HEADER, idempotencyKey, signal);
    return earlier ? { found: true, result: replyResult(args.ticketId, earlier) } : { found: false };
  },
  needsApproval: (args) => {
    const angry = args.customerSentiment === 'angry';
    const large = args.orderValueCents > APPROVAL_THRESHOLD_CENTS;
    if (!angry && !large) return undefined;
    const why = [angry && 'angry customer', large && `order of ${dollars(args.orderValueCents)}`].filter(Boolean).join(', ');
    return {
      summary: `send_reply to ${args.to} on ${args.ticketId} (${why})`,
      ...(args.orderValueCents > 0 && { amount: { minor: args.orderValueCents, currency: 'usd' } }),
      details: { ticket: args.ticketId, to: args.to, subject: args.subject, sentiment: args.customerSentiment, reply: clip(args.body, 500) },
    };
  },
  describe: (args) => `reply to ${args.to} on ${args.ticketId}: ${JSON.stringify(args.subject)}`,
  execute: async (args, { deps, idempotencyKey, signal }) => {
    // The approval rule can only read the arguments, so they are checked against the ticket: a
    // model that understated the sentiment or the order value must not skip the approval.
    const ticket = await deps.helpdesk.getTicket(args.ticketId, signal);
    const mismatch = [
      args.to !== ticket.from && `to is ${args.to}, the ticket is from ${ticket.from}`,
      args.customerSentiment !== ticket.sentiment && `customerSentiment is ${args.customerSentiment}, the ticket says ${ticket.sentiment}`,
      args.orderValueCents !== (ticket.orderValueCents ?? 0) && `orderValueCents is ${args.orderValueCents}, the ticket says ${ticket.orderValueCents ?? 0}`,
    ].filter(Boolean);
    if (mismatch.length > 0) throw new InvalidInputError(`send_reply on ${args.ticketId}: ${mismatch.join('; ')}`);
    const mail = await deps.mail.send(
      { to: args.to, subject: args.subject, text: args.body, inReplyTo: ticket.id, headers: { [KEY_HEADER]: idempotencyKey, 'X-Ticket-Id': ticket.id } },
      signal,
    );
    return replyResult(args.ticketId, mail);
  },
});

const escalate = defineTool({
  name: 'escalate',
  description: "Puts a ticket in a person's queue (tier2: questions the knowledge base cannot answer; billing: charges; legal: legal threats) with the reason.",
  input: z.object({ ticketId: TicketId, queue: Queue, reason: z.string().min(1).max(1000) }).strict(),
  effect: 'write',
  // The helpdesk deduplicates ticket creation on the Idempotency-Key (as Zendesk's API does).
  idempotencyKeys: true,
  describe: (args) => `escalate ${args.ticketId} to ${args.queue}`,
  execute: (args, { deps, idempotencyKey, signal }) => (deps as Deps).helpdesk.escalate(args, idempotencyKey, signal),
});

export const supportTriage = defineAgent<TriageRunInput, Deps>({
  name: 'support-triage',
  model: 'sim:savepoint-sim-1',
  system: [
    "You triage a support inbox. List its tickets; for each, read it and search the knowledge base, then decide:",
    '- spam, or a duplicate of a ticket already handled in this run (same sender and subject): leave it;',
    '- a legal threat: escalate to legal; a disputed charge or chargeback: escalate to billing;',
    '- a question a knowledge-base article answers (score 0.5 or more): send one reply built on it;',
    '- otherwise: escalate to tier2.',
    "Copy the ticket's sentiment and order value into send_reply. A reply that is rejected or not approved in time is escalated to tier2.",
    'Never send a second reply to a ticket. When every ticket is decided, stop with a short summary.',
  ].join('\n'),
  input: TriageRunInput,
  prompt: (input) => `Triage the support inbox "${input.inbox}"${input.since ? ` (tickets received since ${input.since})` : ''}.`,
  tools: [listTickets, getTicket, searchKb, sendReply, escalate],
  env: Object.keys(Environment.shape),
  deps: (env, { fetch }) => {
    const { HELPDESK_API_URL, MAIL_API_URL } = parseOrThrow(Environment, env, 'support-triage environment');
    return { helpdesk: new HelpdeskClient({ baseUrl: HELPDESK_API_URL, fetch }), mail: new MailClient({ baseUrl: MAIL_API_URL, fetch }) };
  },
  version: '1',
  report: triageSummary,
});

export default supportTriage;

/** What the run did with the inbox, from the recorded tool calls (never from what the model says). */
export function triageSummary(calls: readonly ToolTrace[]) {
  const ok = (name: string) => calls.filter((call) => call.name === name && call.status === 'completed' && call.outcome === 'ok');
  const replied = new Set(ok('send_reply').map((call) => String(call.args['ticketId'])));
  const escalated = new Set(ok('escalate').map((call) => String(call.args['ticketId'])));
  const tickets = listedTickets(calls);
  return {
    tickets: tickets.size,
    replied: replied.size,
    escalated: escalated.size,
    notApproved: calls.filter((call) => call.name === 'send_reply' && (call.outcome === 'rejected' || call.outcome === 'expired')).length,
    replyErrors: calls.filter((call) => call.name === 'send_reply' && call.outcome === 'error').length,
    // Spam and duplicates: listed, and neither answered nor escalated.
    left: [...tickets].filter((id) => !replied.has(id) && !escalated.has(id)).length,
  };
}

/** The ticket ids the run listed (from the recorded `list_tickets` results). */
function listedTickets(calls: readonly ToolTrace[]): Set<string> {
  const ids = new Set<string>();
  for (const call of calls) {
    if (call.name !== 'list_tickets' || call.outcome !== 'ok' || !call.result) continue;
    const parsed = JSON.parse(call.result) as { tickets?: { id?: unknown }[] };
    for (const ticket of parsed.tickets ?? []) if (typeof ticket.id === 'string') ids.add(ticket.id);
  }
  return ids;
}

function dollars(cents: number): string {
  return `$${(cents / 100).toFixed(2)}`;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
