import { type AgentDefinition, type EffectKeyContext, type ToolDefinition } from '../define.js';
import type { BlobStore, CallClaim, GuardLedger } from '../ledger/ledger.js';
import { LeaseHeldError, SettleWaitError } from '../shared/errors.js';
import type { EffectRecord, ToolCallRecord } from '../records/ledger-records.js';
import { type Outcome } from './failures.js';
/**
 * The effect's key, `<agent>:<tool>:<business key>`, when the tool names its effect by one; else
 * undefined (the call is its own effect). A key the tool's function cannot make from these
 * arguments is refused with a message for the model (they came from it).
 */
export declare function effectKeyOf(agent: Pick<AgentDefinition, 'name'>, tool: ToolDefinition, args: unknown, context: EffectKeyContext): {
    key?: string;
    refused?: string;
};
/** A claim of the call's effect, as CallTool acts on it. */
export type EffectGate = 
/** This call holds the effect: send `args` (the holder's, on a takeover); `earlierSend`: an earlier attempt sent it, its outcome unknown. */
{
    go: true;
    args: unknown;
    attempts: number;
    earlierSend?: string;
}
/** Another call completed it: its result is this call's, nothing is sent. */
 | {
    done: Outcome;
}
/** Another live call holds it, or its send is settling: wait (`claimRefused`), never send. */
 | {
    wait: string;
    held: EffectRecord;
};
/** What a claim of a call with its effect (ToolCallLedger `claimCall` with `effect`) comes to; the call's own record in the way is the caller's. */
export declare function effectGate(ledger: BlobStore, tool: ToolDefinition, claim: CallClaim, runId: string): Promise<EffectGate | undefined>;
/**
 * Why a claim was refused, as the state machine waits on it: a live lease is Agent.LeaseHeld (its
 * Retry waits; the message names the lease's end and the settle time's); a lease over whose send
 * is still settling is Agent.SettleWait, the seconds left (a Wait state waits them out, however
 * long the tool's settle time is).
 */
export declare function claimRefused(record: Pick<ToolCallRecord, 'leaseUntil' | 'settleMs' | 'sentAt'>, what: string, now: Date): LeaseHeldError | SettleWaitError;
/**
 * A call claimed again whose tool reconciles: each claim after the first asks `reconcile` once.
 * Past `maxReconciles`, the call is undecided — `reconcile` kept failing, or each send lost its
 * answer — and goes to a person: the outcome the model is told, never a send.
 */
export declare function undecided(tool: ToolDefinition, attempts: number): Outcome | undefined;
/**
 * What a claim taken again decides before anything is sent, when an earlier attempt's send is of
 * unknown outcome (`earlierSend`): a tool with idempotency keys re-sends under the same key, one
 * with `reconcile` asks it first (undefined: go on); a tool with neither cannot find out, so the
 * call is escalated — never a second send of an unknown outcome.
 */
export declare function unknownEarlierSend(tool: ToolDefinition, earlierSend: string | undefined): Outcome | undefined;
/** Records the escalation where a person sees it: a guard event on the run (the EffectsEscalated metric and alarm follow it). */
export declare function recordEscalation(ledger: Pick<GuardLedger, 'recordGuardEvent'>, call: Pick<ToolCallRecord, 'runId' | 'turn' | 'call' | 'name'>, now: Date): Promise<void>;
