import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildReport } from '../../lambdas/runs/report.js';
import { defineTool, guaranteeCondition, guaranteeOf } from '../../lambdas/define.js';
import { at, call, run } from '../contract/fixtures.js';
import { claimRefused } from '../../lambdas/tools/effects.js';

const write = { name: 'send', description: 'sends', input: z.object({ id: z.string() }), effect: 'write' as const, execute: async () => ({}) };

describe('the guarantee a tool prints', () => {
  it('says the condition it holds under, and the scope of its key', () => {
    expect(guaranteeCondition({ effect: 'read' })).toBe('repeating it changes nothing');
    expect(guaranteeCondition({ effect: 'write', idempotencyKeys: true })).toBe('within a run, if the provider deduplicates on the idempotency key');
    expect(guaranteeCondition({ effect: 'write', idempotencyKeys: true, idempotencyKey: (args: { id: string }) => args.id })).toMatch(/^across runs, by its business key/);
    expect(guaranteeCondition({ effect: 'write', reconcile: async () => ({ found: false }), settleMs: 60_000 })).toBe(
      'within a run, if the provider shows a committed request within 60000 ms of receiving it (settleMs); a lost answer is reconciled that long after the send, and sent again only if not found',
    );
    expect(guaranteeCondition({ effect: 'write', reconcile: async () => ({ found: false }) })).toBe(
      'within a run: a lost answer is reconciled 20000 ms after the send (the tool timeout); found, it is recorded; else escalated to a person, never sent again (declare settleMs to re-send after "not found")',
    );
    expect(guaranteeCondition({ effect: 'write' })).toBe('within a run: a call whose answer is lost is escalated to a person, never sent again');
  });

  it('is at-most-once for a write that cannot be re-sent safely: neither keys nor reconcile, or reconcile with no declared settle time', () => {
    const reconcile = async () => ({ found: false as const });
    expect(guaranteeOf({ effect: 'write' })).toBe('at-most-once');
    expect(guaranteeOf({ effect: 'write', reconcile })).toBe('at-most-once');
    expect(guaranteeOf({ effect: 'write', reconcile, settleMs: 60_000 })).toBe('exactly-once');
    expect(guaranteeOf({ effect: 'write', idempotencyKeys: true })).toBe('exactly-once');
  });

  it('is the one the call recorded when the report has no agent code (not at-least-once for every write)', () => {
    const report = buildReport(undefined, { run: run('r1'), calls: [call({ status: 'completed', outcome: 'ok', guarantee: 'exactly-once' })], approvals: [] }, at(10));
    expect(report.tools['issue_refund']).toMatchObject({ guarantee: 'exactly-once', calls: 1 });
    // A call recorded before calls carried their guarantee: the weakest.
    const older = buildReport(undefined, { run: run('r1'), calls: [call({ status: 'completed', outcome: 'ok' })], approvals: [] }, at(10));
    expect(older.tools['issue_refund']!.guarantee).toBe('at-least-once');
  });
});

describe('defineTool’s effect settings', () => {
  it('fails when idempotencyKey is set on a read, or is not a function', () => {
    expect(() => defineTool({ ...write, effect: 'read', idempotencyKey: (args) => args.id })).toThrow(/idempotencyKey must be a function .* of a 'write' tool/);
    expect(() => defineTool({ ...write, idempotencyKey: 'id' as never })).toThrow(/idempotencyKey must be a function/);
  });

  it('fails when settleMs or maxReconciles is set without reconcile, or out of range, naming the field and value', () => {
    expect(() => defineTool({ ...write, settleMs: 1_000 })).toThrow('defineTool send: settleMs only applies to a tool with reconcile');
    const reconcile = async () => ({ found: false as const });
    expect(() => defineTool({ ...write, reconcile, settleMs: 300_001 })).toThrow('defineTool send: settleMs must be a whole number from 0 to 300000, got 300001');
    expect(() => defineTool({ ...write, reconcile, maxReconciles: 0 })).toThrow('defineTool send: maxReconciles must be a whole number from 1 to 10, got 0');
    expect(defineTool({ ...write, reconcile, settleMs: 60_000, maxReconciles: 2 }).settleMs).toBe(60_000);
  });
});

describe('a claim refused while another attempt holds it or its send settles', () => {
  const record = { leaseUntil: '2026-01-01T00:00:10.000Z', settleMs: 60_000, sentAt: '2026-01-01T00:00:02.000Z' };
  it('is Agent.LeaseHeld while the lease lives, naming the lease’s end and the settle time’s', () => {
    const refused = claimRefused(record, 'tool call 3/1 of run r1 is in flight', new Date('2026-01-01T00:00:05.000Z'));
    expect(refused.name).toBe('Agent.LeaseHeld');
    expect(refused.message).toBe(
      'tool call 3/1 of run r1 is in flight until 2026-01-01T00:00:10.000Z (its lease); settle time 60000 ms from the send at 2026-01-01T00:00:02.000Z: it may be taken over after 2026-01-01T00:01:02.000Z',
    );
  });

  it('is Agent.SettleWait once the lease is over, its message led by the whole seconds left (what the state machine waits)', () => {
    const refused = claimRefused(record, 'tool call 3/1 of run r1 is in flight', new Date('2026-01-01T00:00:20.500Z'));
    expect(refused.name).toBe('Agent.SettleWait');
    expect(refused.message).toMatch(/^42 s to wait \(settle\): tool call 3\/1 of run r1 is in flight: its lease ended at 2026-01-01T00:00:10.000Z; settle time 60000 ms/);
  });
});
