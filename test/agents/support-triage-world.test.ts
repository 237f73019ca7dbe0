import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { supportTriage } from '../../agents/support-triage/agent.dev.js';
import { KEY_HEADER } from '../../agents/support-triage/domain.js';
import { HelpdeskClient, MailClient } from '../../agents/support-triage/http-clients.js';
import { startMailServer, type MailServer, type MailServerOptions } from '../../agents/support-triage/sim/mail-server.js';
import { decide } from '../../agents/support-triage/sim/policy.js';
import { guaranteeOf } from '../../lambdas/define.js';
import { ErrorNames, MalformedResponseError } from '../../lambdas/shared/errors.js';
import { sampleInbox } from '../support/triage-harness.js';
import { scratchDir } from '../support/scratch.js';

/**
 * The support-triage agent's pieces on their own: the simulated providers (a mail provider without
 * idempotency keys, searchable by header; a helpdesk whose escalations take keys), the clients'
 * error contract, and the scripted model's determinism.
 */

const servers: MailServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});

async function start(options: Partial<MailServerOptions> = {}) {
  const server = await startMailServer({ inbox: sampleInbox, ...options });
  servers.push(server);
  return { server, mail: new MailClient({ baseUrl: server.url }), helpdesk: new HelpdeskClient({ baseUrl: server.url }) };
}

const reply = (key: string) => ({ to: 'ana.lima@example.com', subject: 'Re: hi', text: 'hello', inReplyTo: 'tkt_001', headers: { [KEY_HEADER]: key } });

describe('the simulated mail provider', () => {
  it('has no idempotency key: the same mail posted twice is sent twice; sent mail is found by its header', async () => {
    const { server, mail } = await start();
    const first = await mail.send(reply('run:1:toolu_1'));
    await mail.send(reply('run:1:toolu_1'));
    expect(server.sent()).toHaveLength(2);
    expect(server.sentCountBy(KEY_HEADER).get('run:1:toolu_1')).toBe(2);
    // Header names are case-insensitive, as in mail.
    expect(await mail.findSent(KEY_HEADER.toLowerCase(), 'run:1:toolu_1')).toHaveLength(2);
    expect((await mail.findSent(KEY_HEADER, 'run:1:toolu_1'))[0]).toEqual(first);
    expect(await mail.findSent(KEY_HEADER, 'run:1:other')).toEqual([]);
  });

  it('sends, then drops the answer when told to: the client sees a transient error, the mail is out', async () => {
    const { server, mail } = await start({ dropSendResponses: () => true });
    const error = await mail.send(reply('k')).catch((caught: unknown) => caught as Error);
    expect(error).toMatchObject({ name: ErrorNames.Transient, message: expect.stringMatching(/^POST \/v1\/mail\/send failed: network error/) });
    expect(server.sent()).toHaveLength(1);
    expect(await mail.findSent(KEY_HEADER, 'k')).toHaveLength(1);
  });

  it('keeps its journal across a restart and drops a write torn by a crash', async () => {
    const dataFile = join(scratchDir('savepoint-mail-'), 'mail.jsonl');
    const { server, mail, helpdesk } = await start({ dataFile });
    await mail.send(reply('a'));
    await helpdesk.escalate({ ticketId: 'tkt_009', queue: 'tier2', reason: 'no article' }, 'esc-key');
    await server.close();
    writeFileSync(dataFile, `${readFileSync(dataFile, 'utf8')}{"kind":"mail","rec`); // torn by a crash

    const again = await start({ dataFile });
    expect(again.server.sent().map((sent) => sent.headers[KEY_HEADER])).toEqual(['a']);
    expect(await again.mail.findSent(KEY_HEADER, 'a')).toHaveLength(1);
    // The escalation's key survives too: a replay returns the first one.
    expect(await again.helpdesk.escalate({ ticketId: 'tkt_009', queue: 'tier2', reason: 'no article' }, 'esc-key')).toMatchObject({ id: 'esc_0001' });
    expect(again.server.escalations()).toHaveLength(1);
  });

  it('injects seeded transient faults before doing anything, never on the inspection routes', async () => {
    const { server, mail } = await start({ faults: { failRate: 0.5, seed: 3 } });
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => mail.send(reply(`k${i}`)).then(() => 'ok', (error: Error) => error.name)));
    expect(new Set(outcomes)).toEqual(new Set(['ok', ErrorNames.Transient]));
    expect(server.sent()).toHaveLength(outcomes.filter((outcome) => outcome === 'ok').length);
    for (let i = 0; i < 10; i++) expect(await mail.listSent()).toHaveLength(server.sent().length);
  });
});

describe('the simulated helpdesk and its client', () => {
  it('lists an inbox since a time, reads tickets, and searches the knowledge base', async () => {
    const { helpdesk } = await start();
    expect(await helpdesk.listTickets(sampleInbox.inbox, undefined)).toHaveLength(13);
    expect((await helpdesk.listTickets(sampleInbox.inbox, '2026-11-28T13:00:00Z')).map((ticket) => ticket.id)).toEqual(['tkt_011', 'tkt_012', 'tkt_013']);
    expect(await helpdesk.getTicket('tkt_005')).toMatchObject({ sentiment: 'neutral', orderValueCents: 149_900 });
    const [best] = await helpdesk.searchKb('I forgot my password and need a reset');
    expect(best).toMatchObject({ id: 'kb_password', score: 0.5 });
  });

  it('maps failures onto the error contract: 404 invalid input, 422 terminal, a broken body malformed', async () => {
    const { helpdesk } = await start();
    await expect(helpdesk.getTicket('tkt_999')).rejects.toMatchObject({ name: ErrorNames.InvalidInput, message: expect.stringContaining("No such ticket: 'tkt_999'") });
    await expect(helpdesk.listTickets('nobody@acme.example', undefined)).rejects.toMatchObject({ name: ErrorNames.InvalidInput });
    await helpdesk.escalate({ ticketId: 'tkt_009', queue: 'tier2', reason: 'first' }, 'same-key');
    await expect(helpdesk.escalate({ ticketId: 'tkt_009', queue: 'billing', reason: 'other' }, 'same-key')).rejects.toMatchObject({ name: ErrorNames.Terminal });
    const garbled = new HelpdeskClient({ baseUrl: 'http://127.0.0.1:1', fetch: async () => new Response('{"id":"tkt_001"}', { status: 200 }) });
    await expect(garbled.getTicket('tkt_001')).rejects.toBeInstanceOf(MalformedResponseError);
  });
});

describe('the support-triage agent definition', () => {
  it('declares its guarantees: reads, a send that reconciles, an escalation with keys', () => {
    const guarantees = Object.fromEntries(supportTriage.tools.map((tool) => [tool.name, guaranteeOf(tool)]));
    expect(guarantees).toEqual({ list_tickets: 'read', get_ticket: 'read', search_kb: 'read', send_reply: 'exactly-once', escalate: 'exactly-once' });
    const send = supportTriage.tools.find((tool) => tool.name === 'send_reply')!;
    expect(send.idempotencyKeys).toBeUndefined();
    expect(send.reconcile).toBeTypeOf('function');
  });

  it('asks for approval for an angry customer or an order above the threshold, not otherwise', () => {
    const send = supportTriage.tools.find((tool) => tool.name === 'send_reply')!;
    const run = { runId: 'r', input: supportTriage.input.parse({ inbox: 'x' }), config: {} as never };
    const none = { calls: [] };
    // Its rule reads no deps.
    const deps = undefined as never;
    const args = { ticketId: 'tkt_001', to: 'a@example.com', subject: 'Re: x', body: 'hello', customerSentiment: 'neutral', orderValueCents: 100_000 };
    expect(send.needsApproval!(args, run, none, deps)).toBeUndefined();
    expect(send.needsApproval!({ ...args, orderValueCents: 100_001 }, run, none, deps)).toMatchObject({ amount: { minor: 100_001, currency: 'usd' }, summary: expect.stringContaining('order of $1000.01') });
    expect(send.needsApproval!({ ...args, customerSentiment: 'angry', orderValueCents: 0 }, run, none, deps)).toMatchObject({ summary: expect.stringContaining('angry customer') });
  });

  it('validates its environment when its clients are built', () => {
    expect(() => supportTriage.deps!({ HELPDESK_API_URL: 'http://127.0.0.1:1' }, { fetch })).toThrow(/MAIL_API_URL/);
  });

  it('has a scripted model that is a pure function of the request', () => {
    const request = {
      model: 'savepoint-sim-1',
      max_tokens: 1000,
      system: supportTriage.system,
      messages: [{ role: 'user' as const, content: supportTriage.prompt(supportTriage.input.parse({ inbox: 'support@acme.example', since: '2026-11-28' })) }],
    };
    const first = decide(request);
    expect(first).toEqual(decide(structuredClone(request)));
    expect(first.content[1]).toMatchObject({ type: 'tool_use', name: 'list_tickets', input: { inbox: 'support@acme.example', since: '2026-11-28' } });
  });
});
