import { DEFAULT_MAX_RECONCILES, type AgentDefinition, type EffectKeyContext, type ToolDefinition } from '../define.js';
import { BlobIntegrityError, copyResult, readEffectResult, readResult, type BlobRef } from '../ledger/blobs.js';
import type { BlobStore, CallClaim, EffectLedger, GuardLedger, RunLedger } from '../ledger/ledger.js';
import { takeoverAfter } from '../ledger/protocol.js';
import { LeaseHeldError, SettleWaitError } from '../shared/errors.js';
import { clip } from '../shared/text.js';
import type { EffectRecord, ToolCallRecord } from '../records/ledger-records.js';
import { escalated, type Outcome } from './failures.js';

/**
 * The once-only rules of a write call beyond its own claim (the transitions are protocol.ts's):
 * an effect named by a business key, claimed across the agent's runs; the settle time before a
 * call whose outcome is unknown is reconciled; and the bound on how often one call is reconciled
 * before a person decides instead.
 */


/** The longest idempotency key a provider is sent (Stripe's and most others' limit). */
const MAX_KEY_CHARS = 255;

/**
 * The effect's key, `<agent>:<tool>:<business key>`, when the tool names its effect by one; else
 * undefined (the call is its own effect). A key the tool's function cannot make from these
 * arguments is refused with a message for the model (they came from it).
 */
export function effectKeyOf(agent: Pick<AgentDefinition, 'name'>, tool: ToolDefinition, args: unknown, context: EffectKeyContext): { key?: string; refused?: string } {
  if (!tool.idempotencyKey) return {};
  const business: unknown = tool.idempotencyKey(args, context);
  const prefix = `${agent.name}:${tool.name}:`;
  const key = `${prefix}${String(business)}`;
  if (typeof business !== 'string' || business.length === 0) {
    return { refused: `${tool.name}: these arguments give no business key (${JSON.stringify(business)}): it must be a non-empty string, at most ${MAX_KEY_CHARS} characters with the agent and tool names` };
  }
  if (key.length > MAX_KEY_CHARS) {
    const limit = MAX_KEY_CHARS - prefix.length;
    return { refused: `${tool.name}: the business key these arguments give is too long: ${business.length} characters, at most ${limit} (${MAX_KEY_CHARS} with the agent and tool names, "${prefix}"): ${JSON.stringify(clip(business, 80))}` };
  }
  return { key };
}

/** A claim of the call's effect, as CallTool acts on it. */
export type EffectGate =
  /** This call holds the effect: send `args` (the holder's, on a takeover); `earlierSend`: an earlier attempt sent it, its outcome unknown. */
  | { go: true; args: unknown; attempts: number; earlierSend?: string }
  /** Another call completed it: its result is this call's, nothing is sent. */
  | { done: Outcome }
  /** Another live call holds it, or its send is settling: wait (`claimRefused`), never send. */
  | { wait: string; held: EffectRecord };

/** What reading an effect's recorded result uses of the ledger: its blobs, the effect's, and whether the run that made it is still there. */
export type EffectResultLedger = BlobStore & Pick<EffectLedger, 'getEffectBlob'> & Pick<RunLedger, 'getRun'>;

/** What a claim of a call with its effect (ToolCallLedger `claimCall` with `effect`) comes to; the call's own record in the way is the caller's. */
export async function effectGate(ledger: EffectResultLedger, tool: ToolDefinition, claim: CallClaim, runId: string): Promise<EffectGate | undefined> {
  if (claim.claimed) {
    if (!claim.effect) return undefined;
    // A takeover sends what the dead holder may have sent: the provider may refuse the same key with other parameters.
    const parsed = tool.input.safeParse(claim.effect.args);
    return { go: true, args: parsed.success ? parsed.data : undefined, attempts: claim.effect.attempts, ...(claim.effect.earlierSend !== undefined && { earlierSend: claim.effect.earlierSend }) };
  }
  const held = claim.effect;
  if (!held) return undefined;
  if (held.status === 'completed') return { done: await doneFrom(ledger, held, runId) };
  return { wait: `effect ${held.key} is in flight in run ${held.runId} (turn ${held.turn}, call ${held.call})`, held };
}

/**
 * Why a claim was refused, as the state machine waits on it: a live lease is Agent.LeaseHeld (its
 * Retry waits; the message names the lease's end and the settle time's); a lease over whose send
 * is still settling is Agent.SettleWait, the seconds left (a Wait state waits them out, however
 * long the tool's settle time is).
 */
export function claimRefused(record: Pick<ToolCallRecord, 'leaseUntil' | 'settleMs' | 'sentAt'>, what: string, now: Date): LeaseHeldError | SettleWaitError {
  const after = takeoverAfter(record);
  const settle = record.settleMs ? `; settle time ${record.settleMs} ms from the send${record.sentAt ? ` at ${record.sentAt}` : ''}: it may be taken over after ${after}` : '';
  if (record.leaseUntil < now.toISOString() && after >= now.toISOString()) {
    return new SettleWaitError((Date.parse(after) - now.getTime() + 1) / 1000, `${what}: its lease ended at ${record.leaseUntil}${settle}`);
  }
  return new LeaseHeldError(`${what} until ${record.leaseUntil} (its lease)${settle}`);
}

/**
 * The holder's outcome as this run records it: what its result stores by reference — the result, or
 * the whole of a result cut for the model, which the cut names — is read from the effect's own chunks
 * (blobs.ts `storeCallResult`), which last as long as its record, and copied into this run's blobs,
 * where this run's references resolve (blobs.ts `copyResult`). An effect an earlier version recorded
 * has them with the run that made it only: read there while that run is in the ledger, and once it
 * is gone (pruned), the model is told that the effect was done and its result is no longer kept
 * (`resultGone`; a cut keeps its head and says its whole is gone) — never a second send.
 */
async function doneFrom(ledger: EffectResultLedger, held: EffectRecord, runId: string): Promise<Outcome> {
  const outcome = held.outcome ?? 'ok';
  if (held.result === undefined || held.runId === runId) return { outcome, result: held.result ?? '', latencyMs: 0 };
  const result = await copyResult(ledger, runId, held.result, async (ref) => (await readEffectResult(ledger, held.key, ref)) ?? (await holderResult(ledger, held, ref)));
  return result === undefined ? resultGone(held) : { outcome, result, latencyMs: 0 };
}

/** The result as the holder's run stored it; undefined when that run is gone from the ledger (a run still there with a chunk missing is damaged: BlobIntegrityError). */
async function holderResult(ledger: EffectResultLedger, held: EffectRecord, ref: BlobRef): Promise<string | undefined> {
  try {
    return await readResult(ledger, held.runId, ref);
  } catch (error) {
    if (error instanceof BlobIntegrityError && !(await ledger.getRun(held.runId))) return undefined;
    throw error;
  }
}

/** The answer to a call of a completed effect whose result is no longer in the ledger (`doneFrom`): an error result naming it, for the model. */
function resultGone(held: Pick<EffectRecord, 'key' | 'name' | 'runId' | 'recordedAt'>): Outcome {
  const message =
    `${held.name} was already done under this business key (${held.key}) by run ${held.runId}${held.recordedAt ? ` at ${held.recordedAt}` : ''}, ` +
    `and was not sent again; its result was stored with that run, which is no longer in the ledger (pruned), so it cannot be shown. Do not call ${held.name} for this again.`;
  return { outcome: 'error', result: JSON.stringify({ error: 'effect_result_gone', key: held.key, message }), latencyMs: 0 };
}

/**
 * A call claimed again whose tool reconciles: each claim after the first asks `reconcile` once.
 * Past `maxReconciles`, the call is undecided — `reconcile` kept failing, or each send lost its
 * answer — and goes to a person: the outcome the model is told, never a send.
 */
export function undecided(tool: ToolDefinition, attempts: number): Outcome | undefined {
  const max = tool.maxReconciles ?? DEFAULT_MAX_RECONCILES;
  if (!tool.reconcile || attempts - 1 <= max) return undefined;
  return escalated(tool.name, `still unknown after ${max} reconcile(s)`);
}

/**
 * What a claim taken again decides before anything is sent, when an earlier attempt's send is of
 * unknown outcome (`earlierSend`): a tool with idempotency keys re-sends under the same key, one
 * with `reconcile` asks it first (undefined: go on); a tool with neither cannot find out, so the
 * call is escalated — never a second send of an unknown outcome.
 */
export function unknownEarlierSend(tool: ToolDefinition, earlierSend: string | undefined): Outcome | undefined {
  if (earlierSend === undefined || tool.idempotencyKeys || tool.reconcile) return undefined;
  return escalated(tool.name, `a request sent at ${earlierSend} got no answer, and ${tool.name} has neither idempotency keys nor reconcile`);
}

/** Records the escalation where a person sees it: a guard event on the run (the EffectsEscalated metric and alarm follow it). */
export async function recordEscalation(ledger: Pick<GuardLedger, 'recordGuardEvent'>, call: Pick<ToolCallRecord, 'runId' | 'turn' | 'call' | 'name'>, now: Date): Promise<void> {
  await ledger.recordGuardEvent(call.runId, {
    guard: 'effect',
    action: 'stopped',
    reason: `${call.name} (turn ${call.turn}, call ${call.call}): outcome unknown, escalated to a person, not sent again`,
    at: now.toISOString(),
  });
}
