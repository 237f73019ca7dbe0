import * as z from 'zod';
import type { Message, MessageRequest, TextBlock, ToolUseBlock } from 'savepoint';
import { clip, quote, readCalls, readResult, type RecordedCall } from 'savepoint/sim';
import { Escalation, KbHit, Ticket, TicketSummary, type Queue } from '../domain.js';

type ToolName = 'list_tickets' | 'get_ticket' | 'search_kb' | 'send_reply' | 'escalate';

/**
 * The simulated model: a deterministic support triager. It keeps no memory — every decision is
 * recomputed from the conversation, so the same request always gets the same response and a run
 * resumed from its ledger sees the same model.
 *
 * Turn shape (pipelined, about one model turn and three tool calls per ticket):
 *   1. list_tickets
 *   2. get_ticket of ticket 1
 *   3. search_kb for ticket 1 (its subject and message), get_ticket of ticket 2
 *   k. the decision on ticket k-2 (send_reply / escalate / nothing for spam and duplicates),
 *      search_kb for ticket k-1, get_ticket of ticket k
 *   … a final end_turn with the summary once every ticket is decided.
 *
 * Tool results are read as the JSON the tools return. Anything unexpected (is_error, not JSON, the
 * wrong shape) gets the ticket escalated to a person — and a reply that failed or was not approved
 * is escalated, never sent again.
 */

export interface PolicyResponse {
  content: (TextBlock | ToolUseBlock)[];
  stop_reason: 'tool_use' | 'end_turn';
}

interface Action {
  name: ToolName;
  input: Record<string, unknown>;
}

type Outcome =
  | { kind: 'pending' }
  | { kind: 'act'; action: Action; note: string }
  | { kind: 'replied'; note: string }
  | { kind: 'escalated'; note: string }
  | { kind: 'left'; note: string };

/** A knowledge-base article answers a ticket when at least half its keywords are in it. */
const ANSWER_SCORE = 0.5;
const SPAM = /\b(you have won|claim your prize|click here|gift card)\b/i;
const LEGAL = /\b(lawyer|attorney|lawsuit|sue you|legal action)\b/i;
const BILLING = /\b(chargeback|unauthori[sz]ed charge|fraud|dispute)\b/i;
const TicketList = z.object({ tickets: z.array(TicketSummary) });
const Articles = z.object({ articles: z.array(KbHit) });
const Sent = z.object({ messageId: z.string(), ticketId: z.string() });

export function decide(request: MessageRequest): PolicyResponse {
  const turn = request.messages.filter((m) => m.role === 'assistant').length + 1;
  const task = findTask(request.messages);
  if (task === undefined) return finish('I cannot triage without an inbox: the first user message should name it in double quotes.');

  const calls = readCalls(request.messages);
  const listCall = calls.find((c) => c.name === 'list_tickets');
  if (listCall === undefined) {
    const input = { inbox: task.inbox, ...(task.since && { since: task.since }) };
    return act(turn, [`Listing the tickets of ${task.inbox}`], [{ name: 'list_tickets', input }]);
  }
  const listed = readResult(listCall, TicketList);
  if (!listed.ok) return finish(`I cannot triage ${task.inbox}: ${listed.problem}.`);

  // A ticket listed twice is one ticket: deciding it twice could answer it twice.
  const tickets = listed.value.tickets.filter((t, i, all) => all.findIndex((o) => o.id === t.id) === i);
  // Tickets are read and searched one at a time and in order, so the i-th get_ticket and the i-th
  // search_kb belong to the i-th ticket.
  const reads = calls.filter((c) => c.name === 'get_ticket');
  const searches = calls.filter((c) => c.name === 'search_kb');

  const notes: string[] = [];
  const actions: Action[] = [];
  const outcomes = tickets.map((ticket, i) => {
    const outcome = outcomeOf(ticket, tickets.slice(0, i), reads[i], searches[i], calls);
    if (outcome.kind === 'act') {
      actions.push(outcome.action);
      notes.push(outcome.note);
    }
    return outcome;
  });

  // The next search: the ticket read last turn, searched with its own words.
  const toSearch = tickets[searches.length];
  const read = reads[searches.length];
  if (toSearch !== undefined && read?.result !== undefined) {
    const ticket = readResult(read, Ticket);
    const query = ticket.ok ? `${ticket.value.subject} ${ticket.value.body}` : toSearch.subject;
    actions.push({ name: 'search_kb', input: { query: clip(query, 500) } });
    notes.push(`searching the knowledge base for ${toSearch.id}`);
  }
  const toRead = tickets[reads.length];
  if (toRead !== undefined) {
    actions.push({ name: 'get_ticket', input: { ticketId: toRead.id } });
    notes.push(`reading ${toRead.id} (${quote(toRead.subject)})`);
  }
  if (actions.length > 0) return act(turn, notes, actions);

  // Every ticket is decided and its decision has come back.
  const count = (kind: Outcome['kind']) => outcomes.filter((o) => o.kind === kind).length;
  const lines = tickets.map((t, i) => `${t.id}: ${'note' in outcomes[i]! ? (outcomes[i] as { note: string }).note : 'pending'}`);
  return finish(
    [`Triaged ${tickets.length} tickets of ${task.inbox}: ${count('replied')} replied, ${count('escalated')} escalated, ${count('left')} left (spam or duplicates).`, ...lines].join('\n'),
  );
}

/** Where one ticket stands, and the tool call it needs next if any. */
function outcomeOf(summary: TicketSummary, earlier: TicketSummary[], read: RecordedCall | undefined, search: RecordedCall | undefined, calls: RecordedCall[]): Outcome {
  const escalate = (queue: Queue, reason: string): Outcome => {
    const clipped = clip(reason, 1000);
    return { kind: 'act', action: { name: 'escalate', input: { ticketId: summary.id, queue, reason: clipped } }, note: `escalating ${summary.id} to ${queue}: ${clipped}` };
  };

  const escalateCall = calls.find((c) => c.name === 'escalate' && c.input['ticketId'] === summary.id);
  if (escalateCall !== undefined) {
    const escalated = readResult(escalateCall, Escalation);
    const note = escalated.ok ? `escalated to ${escalated.value.queue} (${escalated.value.id})` : `escalation failed: ${escalated.problem}`;
    return { kind: 'escalated', note };
  }
  const replyCall = calls.find((c) => c.name === 'send_reply' && c.input['ticketId'] === summary.id);
  if (replyCall !== undefined) {
    const sent = readResult(replyCall, Sent);
    // Never send twice: a reply that failed, was rejected or expired goes to a person.
    if (!sent.ok) return escalate('tier2', `the reply was not sent: ${sent.problem}`);
    return { kind: 'replied', note: `replied (${sent.value.messageId})` };
  }
  if (read?.result === undefined || search?.result === undefined) return { kind: 'pending' };

  const ticket = readResult(read, Ticket);
  if (!ticket.ok) return escalate('tier2', `the ticket could not be read: ${ticket.problem}`);
  const t = ticket.value;
  const text = `${t.subject}\n${t.body}`;
  if (SPAM.test(text)) return { kind: 'left', note: 'left: spam' };
  const original = earlier.find((e) => e.from === t.from && normalizeSubject(e.subject) === normalizeSubject(t.subject));
  if (original !== undefined) return { kind: 'left', note: `left: duplicate of ${original.id}` };
  if (LEGAL.test(text)) return escalate('legal', `legal threat from ${t.from}: ${quote(t.subject)}`);
  if (BILLING.test(text)) return escalate('billing', `disputed charge from ${t.from}: ${quote(t.subject)}`);

  const found = readResult(search, Articles);
  if (!found.ok) return escalate('tier2', `the knowledge base search failed: ${found.problem}`);
  const best = found.value.articles[0];
  if (best === undefined || best.score < ANSWER_SCORE) {
    return escalate('tier2', `no knowledge-base article answers it${best ? ` (best: ${best.id}, score ${best.score})` : ''}`);
  }
  const input = {
    ticketId: t.id,
    to: t.from,
    subject: /^re:/i.test(t.subject) ? t.subject : `Re: ${t.subject}`,
    body: replyBody(t, best),
    customerSentiment: t.sentiment,
    orderValueCents: t.orderValueCents ?? 0,
  };
  return { kind: 'act', action: { name: 'send_reply', input }, note: `replying to ${t.id} with ${best.id}` };
}

function replyBody(ticket: Ticket, article: KbHit): string {
  const firstName = ticket.name.split(/\s+/)[0] ?? ticket.name;
  const sorry = ticket.sentiment === 'angry' || ticket.sentiment === 'negative' ? "I'm sorry for the trouble. " : '';
  return clip(
    [`Hi ${firstName},`, '', `Thanks for writing to us about ${quote(ticket.subject)}. ${sorry}${article.answer}`, '', `More in our help center: ${article.title} — ${article.url}`, '', 'Best regards,', 'Acme Support'].join('\n'),
    5000,
  );
}

function normalizeSubject(subject: string): string {
  return subject.replace(/^\s*((re|fwd?):\s*)+/i, '').trim().toLowerCase();
}

/** The inbox (in double quotes) and the optional `since …` of the first user message (the agent's prompt). */
function findTask(messages: Message[]): { inbox: string; since?: string } | undefined {
  const first = messages.find((m) => m.role === 'user');
  if (first === undefined) return undefined;
  const text = typeof first.content === 'string' ? first.content : first.content.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
  const inbox = /inbox "([^"]+)"/.exec(text)?.[1];
  if (inbox === undefined) return undefined;
  const since = /since (\S+?)\)/.exec(text)?.[1];
  return { inbox, ...(since && { since }) };
}

function act(turn: number, notes: string[], actions: Action[]): PolicyResponse {
  const prefix = `toolu_${String(turn).padStart(3, '0')}_`;
  return {
    content: [
      { type: 'text', text: sentence(notes) },
      ...actions.map((a, i): ToolUseBlock => ({ type: 'tool_use', id: `${prefix}${i}`, name: a.name, input: a.input })),
    ],
    stop_reason: 'tool_use',
  };
}

function finish(text: string): PolicyResponse {
  return { content: [{ type: 'text', text }], stop_reason: 'end_turn' };
}

function sentence(notes: string[]): string {
  const text = notes.join('; ');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
}

