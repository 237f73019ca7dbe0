import { readFileSync } from 'node:fs';
import { parseOrThrow, withDev, type DevWorld, type DevWorldOptions } from 'savepoint';
import { supportTriage as agent } from './agent.js';
import { Inbox } from './domain.js';
import { startMailServer, type MailServer, type MailServerOptions } from './sim/mail-server.js';
import { decide } from './sim/policy.js';

/**
 * The support triage agent's local-only parts: the simulated helpdesk and mail provider and the
 * scripted model. The CLI finds this module beside agent.ts; a deployment bundles agent.ts alone.
 */

/** The simulated world of a local run: the helpdesk and the mail provider, on one loopback port. */
export interface TriageWorld extends DevWorld {
  readonly server: MailServer;
  readonly inbox: Inbox;
}

export const SAMPLE_INBOX = new URL('./sample-inbox.json', import.meta.url).pathname;

export function loadInbox(path: string): Inbox {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`cannot read the inbox file ${path}: ${(error as Error).message}`);
  }
  return parseOrThrow(Inbox, raw, `inbox file ${path}`);
}

/** Starts the world; tests may hand it an inbox and the provider's fault options directly. */
export async function startTriageWorld(
  options: DevWorldOptions & { inbox?: Inbox } & Pick<MailServerOptions, 'dropSendResponses' | 'onRequest' | 'commitDelayMs'>,
): Promise<TriageWorld> {
  const inbox = options.inbox ?? loadInbox(options.dataFile ?? SAMPLE_INBOX);
  const server = await startMailServer({
    inbox,
    dataFile: options.stateDir && `${options.stateDir}/mail.jsonl`,
    faults: { failRate: options.failRate, seed: options.seed + 2_000_003 },
    dropSendResponses: options.dropSendResponses,
    onRequest: options.onRequest,
    commitDelayMs: options.commitDelayMs,
    now: options.now,
  });
  return {
    env: { HELPDESK_API_URL: server.url, MAIL_API_URL: server.url },
    fetch: server.fetch,
    ...(server.recovered && { notes: [server.recovered] }),
    endpoints: { helpdesk: server.url, mail: server.url },
    defaultInput: { inbox: inbox.inbox },
    server,
    inbox,
    inspect: async () => {
      const [sent, escalations] = [server.sent(), server.escalations()];
      return {
        json: { sent, escalations },
        lines: [
          `${sent.length} replies sent`,
          ...sent.map((mail) => `  ${mail.id}  ${mail.headers['X-Ticket-Id'] ?? '?'}  ${mail.to}  ${JSON.stringify(mail.subject)}`),
          `${escalations.length} tickets escalated`,
          ...escalations.map((escalation) => `  ${escalation.id}  ${escalation.ticketId}  ${escalation.queue}: ${escalation.reason}`),
        ],
      };
    },
    close: () => server.close(),
  };
}

/** The support triage agent with its simulated world and scripted model: what local runs and tests run. */
export const supportTriage = withDev(agent, { world: startTriageWorld, policy: decide });

export default supportTriage;
