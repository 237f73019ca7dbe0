import { startTriageWorld, supportTriage, SAMPLE_INBOX, loadInbox, type TriageWorld } from '../../agents/support-triage/agent.dev.js';
import { KEY_HEADER, type Inbox } from '../../agents/support-triage/domain.js';
import type { MailServerOptions } from '../../agents/support-triage/sim/mail-server.js';
import type { AgentDefinition } from '../../lambdas/define.js';
import type { LocalStackOptions } from '../../local/runtime/local-stack.js';
import { skipSettleWaits } from '../../testing/index.js';
import { postDecision, startAgentHarness, waitFor, type AgentHarness, type Finished } from './agent-harness.js';
import { skippingClock } from './manual-clock.js';

/**
 * The support-triage agent on the whole local stack (the synthesized definition on the in-process
 * engine, dynalite in memory, the simulated model), with its world started here so a test can
 * hand it an inbox and the mail provider's faults. Thin over agent-harness.ts, like refund-harness.ts.
 */

export const sampleInbox = loadInbox(SAMPLE_INBOX);
export const sampleInput = { inbox: sampleInbox.inbox };

export interface TriageHarness extends AgentHarness<TriageWorld> {
  /** Decisions posted by `decide` (awaited before a test checks what they did). */
  decisions: Promise<unknown>[];
}

export interface TriageHarnessOptions extends Partial<Omit<LocalStackOptions<TriageWorld>, 'world'>>, Pick<MailServerOptions, 'dropSendResponses' | 'onRequest' | 'commitDelayMs'> {
  inbox?: Inbox;
  /** Decide every approval this way through the approval API as soon as it is asked for. */
  decide?: 'approve' | 'reject';
}

export async function startTriage(options: TriageHarnessOptions = {}): Promise<TriageHarness> {
  const { inbox, dropSendResponses, onRequest, commitDelayMs, decide, ...rest } = options;
  const decisions: Promise<unknown>[] = [];
  // Real time, but a send waiting out its settle time skips it (the tests' sends lose their answers).
  const skipping = options.clock ? undefined : skippingClock();
  const clock = options.clock ?? skipping;
  const world = await startTriageWorld({
    inbox: inbox ?? sampleInbox,
    failRate: options.failRate ?? 0,
    seed: options.seed ?? 1,
    now: () => (clock ? clock.now() : new Date()),
    dropSendResponses,
    onRequest,
    commitDelayMs,
  });
  const harness = await startAgentHarness<TriageWorld>({
    agent: supportTriage as AgentDefinition<any, any, TriageWorld>,
    ownedWorld: world,
    onAsked: (approval, stack) => {
      if (decide) decisions.push(postDecision(stack, approval.approvalId, { decision: decide, reason: `test: ${decide}` }));
    },
    ...rest,
    ...(skipping && { clock: skipping }),
  });
  if (skipping) {
    const stop = skipSettleWaits(harness.stack.engine, skipping.advance);
    const close = harness.stack.close.bind(harness.stack);
    harness.stack.close = async () => {
      stop();
      await close();
    };
  }
  return { ...harness, decisions };
}

// The approval route and the probe wait are every harness's: one copy of each.
export { postDecision, waitFor, type Finished };

/** Idempotency keys the mail provider sent more than one mail for (must always be empty). */
export function keysSentTwice(world: TriageWorld): string[] {
  return [...world.server.sentCountBy(KEY_HEADER)].filter(([, count]) => count > 1).map(([key]) => key);
}

/** Tickets that got more than one reply (must always be empty). */
export function ticketsAnsweredTwice(world: TriageWorld): string[] {
  const counts = new Map<string, number>();
  for (const mail of world.server.sent()) counts.set(mail.inReplyTo ?? '?', (counts.get(mail.inReplyTo ?? '?') ?? 0) + 1);
  return [...counts].filter(([, count]) => count > 1).map(([ticket]) => ticket);
}
