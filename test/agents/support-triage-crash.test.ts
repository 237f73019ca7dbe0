import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CrashPoint, type CrashPoint as Point } from '../../local/runtime/crash.js';
import { cachedTemplate } from '../../local/template/cache.js';
import type { Escalation, Inbox, SentMail } from '../../agents/support-triage/domain.js';
import { KEY_HEADER } from '../../agents/support-triage/domain.js';
import { ledgerOf, savepoint } from '../support/cli-process.js';
import { sampleInbox } from '../support/triage-harness.js';
import { scratchDir } from '../support/scratch.js';

/**
 * The crash matrix of the support-triage agent, in the shape of test/crash/matrix.test.ts: each
 * engine is a real `savepoint run|resume --agent support-triage` process that the crash injection
 * ends with SIGKILL at a step boundary; the next process resumes the run. For each write tool the
 * same tool call dies at every boundary of the call in turn — four processes killed in a row — and the run still
 * finishes with each reply sent exactly once (by `reconcile`: the mail provider has no keys) and
 * each escalation made once (by the helpdesk's idempotency key).
 */

const runId = 'triage-matrix';
/** Two answerable tickets, one for tier2, one spam: send_reply twice, escalate once. */
const inbox: Inbox = { ...sampleInbox, tickets: sampleInbox.tickets.filter((ticket) => ['tkt_001', 'tkt_002', 'tkt_006', 'tkt_009'].includes(ticket.id)) };
/** The ticket whose write each chain kills: the first the run replies to, and the one it escalates. */
const TARGET = { send_reply: 'tkt_001', escalate: 'tkt_009' } as const;
type Tool = keyof typeof TARGET;

/**
 * The boundaries of the tool call itself, where this agent's own guarantees live (reconcile for the
 * mail, the helpdesk's key for the escalation). The model's boundaries before it (model-call,
 * model-recorded) are the harness's, the same for every agent: test/crash/matrix.test.ts crashes
 * there for each of its tools, so the processes that would repeat it here are not started.
 */
const CHAIN: Point[] = [
  CrashPoint.BeforeClaim,
  CrashPoint.AfterClaim,
  CrashPoint.AfterCommit,
  CrashPoint.AfterRecord,
];

/** What the ledger and the provider hold for the tool call right after a crash at each boundary. */
const EXPECTED: Partial<Record<Point, { call: 'none' | 'in_flight' | 'completed'; committed: number }>> = {
  [CrashPoint.BeforeClaim]: { call: 'none', committed: 0 },
  [CrashPoint.AfterClaim]: { call: 'in_flight', committed: 0 },
  // The unknown-outcome window: the mail went out (or the escalation was made), the ledger does not know.
  [CrashPoint.AfterCommit]: { call: 'in_flight', committed: 1 },
  [CrashPoint.AfterRecord]: { call: 'completed', committed: 1 },
};

/** A state directory, with the inbox and the synthesized template the engine processes share. */
async function workspace(name: string) {
  const root = scratchDir(`savepoint-triage-${name}-`);
  const inboxFile = join(root, 'inbox.json');
  const templateFile = join(root, 'template.json');
  writeFileSync(inboxFile, JSON.stringify(inbox));
  writeFileSync(templateFile, JSON.stringify(await cachedTemplate('support-triage')));
  const stateDir = join(root, 'state');
  const common = ['--agent', 'support-triage', '--world-data', inboxFile, '--template', templateFile];
  return {
    stateDir,
    run: (...more: string[]) => ['--state-dir', stateDir, 'run', '--run-id', runId, ...common, ...more],
    resume: (...more: string[]) => ['--state-dir', stateDir, 'resume', runId, ...common, ...more],
  };
}

type Journal = ({ kind: 'mail'; record: SentMail } | { kind: 'escalation'; key: string; record: Escalation })[];

/** What the providers committed, from their journal on disk. */
function journal(stateDir: string): Journal {
  const file = join(stateDir, 'mail.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Journal[number]);
}

/** The committed side effects of one tool on one ticket. */
function committed(stateDir: string, tool: Tool) {
  return journal(stateDir).filter((entry) =>
    tool === 'send_reply' ? entry.kind === 'mail' && entry.record.inReplyTo === TARGET[tool] : entry.kind === 'escalation' && entry.record.ticketId === TARGET[tool],
  );
}

// Each case starts five engine processes, the two cases side by side.
describe.concurrent('the support-triage crash matrix', { timeout: 300_000 }, () => {
  it.each(Object.keys(TARGET) as Tool[])('%s: a crash at every boundary of the call in turn, each recovered by the next process', async (tool) => {
    const { stateDir, run, resume } = await workspace(tool);
    for (const [index, point] of CHAIN.entries()) {
      const args = ['--json', '--crash-at', `${point}:${tool}`];
      const crashed = await savepoint(index === 0 ? run(...args) : resume(...args));
      expect(crashed.signal, `${point}: ${crashed.stderr}`).toBe('SIGKILL');
      expect(crashed.stderr).toContain(`crash injected at ${point} (`);

      const { call } = await ledgerOf(stateDir, runId);
      expect(call(tool)?.status ?? 'none', point).toBe(EXPECTED[point]!.call);
      expect(committed(stateDir, tool), point).toHaveLength(EXPECTED[point]!.committed);
    }

    const finished = await savepoint(resume('--json'));
    expect(finished.code, finished.stderr).toBe(0);
    const report = JSON.parse(finished.stdout) as Record<string, any>;
    expect(report).toMatchObject({ status: 'succeeded', inFlight: 0, summary: { tickets: 4, replied: 2, escalated: 1, left: 1 } });
    expect(report['tools']['send_reply']).toMatchObject({ guarantee: 'exactly-once', ok: 2 });

    // Each reply sent exactly once, each escalation made once; no run lost, nothing left in flight.
    const entries = journal(stateDir);
    const mails = entries.flatMap((entry) => (entry.kind === 'mail' ? [entry.record] : []));
    expect(mails.map((mail) => mail.inReplyTo).sort()).toEqual(['tkt_001', 'tkt_002']);
    expect(new Set(mails.map((mail) => mail.headers[KEY_HEADER])).size).toBe(2);
    expect(entries.filter((entry) => entry.kind === 'escalation').map((entry) => entry.record.ticketId)).toEqual(['tkt_009']);
    const { calls, call } = await ledgerOf(stateDir, runId);
    expect(calls.filter((record) => record.status !== 'completed')).toEqual([]);
    // The ledger recorded the provider's own record of the write, found again after the crashes.
    const target = call(tool)!;
    const entry = committed(stateDir, tool)[0]!;
    if (entry.kind === 'mail') {
      expect(entry.record.headers[KEY_HEADER]).toBe(target.idempotencyKey);
      expect(JSON.parse(target.result!)).toMatchObject({ messageId: entry.record.id, ticketId: TARGET[tool] });
    } else {
      expect(entry.key).toBe(target.idempotencyKey);
      expect(JSON.parse(target.result!)).toEqual(entry.record);
    }
    // Claimed by the processes that died after their claim, then taken over with the same key.
    expect(target.attempts).toBeGreaterThanOrEqual(3);
  });
});
