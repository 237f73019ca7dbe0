import type { EffectHolder } from '../../lambdas/ledger/ledger.js';
import type { BreakerState } from '../../lambdas/records/breaker-state.js';
import type { ApprovalRecord, GuardEvent, RecoveryRecord, RunRecord, ToolCallRecord, TurnRecord } from '../../lambdas/records/ledger-records.js';
import { RUN_STARTED_AT, runRecord } from '../support/records.js';

// The records of the ledger tests: the only place that knows their domain fields.

export const t0 = new Date(RUN_STARTED_AT);
export const at = (seconds: number) => new Date(t0.getTime() + seconds * 1000);
/** The `leaseUntil` of a lease released at `now`: a millisecond before it (protocol.ts `releaseCall`), so the retry claims it at `now`. */
export const releasedAt = (now: Date) => new Date(now.getTime() - 1);

/** A running run driven by `arn:1` (test/support's run record, with the refund agent's fields). */
export function run(runId: string, overrides: Partial<RunRecord> = {}): RunRecord {
  return runRecord({
    runId,
    agent: 'refund-reconciler',
    input: { date: '2026-11-28' },
    prompt: 'Reconcile',
    model: 'savepoint-sim-1',
    executionArn: 'arn:1',
    executions: ['arn:1'],
    // StartRun creates the map: the ledger's applyBudgetExtension sets a path inside it.
    budgetExtensions: {},
    ...overrides,
  });
}

export function turn(number: number, text = 'Looking at the refunds.', runId = 'r1'): TurnRecord {
  return {
    kind: 'turn',
    runId,
    turn: number,
    model: 'savepoint-sim-1',
    content: [{ type: 'text', text }],
    stopReason: 'end_turn',
    usage: { input_tokens: 100, output_tokens: 20 },
    costMicros: 420,
    latencyMs: 3,
    recordedAt: at(number).toISOString(),
  };
}

export function call(overrides: Partial<ToolCallRecord> = {}): ToolCallRecord {
  return {
    kind: 'tool',
    runId: 'r1',
    turn: 3,
    call: 1,
    toolCallId: 'toolu_003_1',
    name: 'issue_refund',
    args: { amountCents: 100, note: { nested: ['a', 'b'] } },
    effect: 'write',
    idempotencyKey: 'r1:3:toolu_003_1',
    status: 'in_flight',
    leaseUntil: at(30).toISOString(),
    attempts: 0,
    ...overrides,
  };
}

/** The holder of a business-key effect: the call of run r1, turn 3, call 1 (the call fixture's), lease to at(30). */
export function holder(overrides: Partial<EffectHolder> = {}): EffectHolder {
  return { key: 'refunds:issue_refund:rr_1', runId: 'r1', turn: 3, call: 1, name: 'issue_refund', args: { refundRequestId: 'rr_1', amountCents: 100 }, leaseUntil: at(30).toISOString(), ...overrides };
}

export function approval(overrides: Partial<ApprovalRecord> = {}): ApprovalRecord {
  return {
    kind: 'approval',
    approvalId: 'apv_0123456789abcdef',
    runId: 'r1',
    turn: 3,
    call: 1,
    toolName: 'issue_refund',
    summary: 'issue_refund $725.00',
    amount: { minor: 72_500, currency: 'usd' },
    status: 'pending',
    decideBy: at(60).toISOString(),
    createdAt: t0.toISOString(),
    ...overrides,
  };
}

export function budgetApproval(extension: number): ApprovalRecord {
  return approval({
    approvalId: `apv_budget_steps_${extension}`,
    turn: 0,
    call: 0,
    toolName: 'extend_budget',
    summary: `steps budget +50% (extension ${extension})`,
    budget: { guard: 'steps', extension, limit: 600 },
  });
}

export function recovery(key: string, reason = 'failed'): RecoveryRecord {
  return { attempts: 1, withoutProgress: 0, atSteps: 4, key, reason, executionName: `recover-${key}`, at: at(50).toISOString() };
}

export function kill(by: string) {
  return { by, at: at(7).toISOString(), reason: `${by} pressed stop` };
}

export function guardEvent(reason: string, second: number): GuardEvent {
  return { guard: 'steps', action: 'warned', reason, at: at(second).toISOString() };
}

export function breaker(name: string, version: number, state: BreakerState['state'] = 'closed'): BreakerState {
  return { name, state, failures: [], trips: 0, version, ...(state === 'open' && { openedAt: at(1).toISOString() }) };
}
