import { describe, expect, it } from 'vitest';
import { at, run, approval, budgetApproval } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/** The approvals role (`ApprovalLedger`): approvals, decisions, task tokens and budget extensions. */
export function approvalsSpec(make: MakeLedger): void {
  describe('approvals', () => {
    const { ledger } = useLedger(make);

    describe('approvals', () => {
      it('creates a pending approval and finds it by its opaque id', async () => {
        expect(await ledger.upsertApproval(approval(), 'token-1')).toEqual(approval());
        expect(await ledger.getApproval('r1', 3, 1)).toEqual(approval());
        expect(await ledger.findApproval('apv_0123456789abcdef')).toEqual(approval());
      });

      it('keeps the task token apart: no approval it returns holds it, getTaskToken does', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        await ledger.upsertApproval(budgetApproval(1), 'token-b');
        const returned = [
          await ledger.getApproval('r1', 3, 1),
          await ledger.getBudgetApproval('r1', 'steps', 1),
          await ledger.findApproval('apv_0123456789abcdef'),
          ...(await ledger.listPendingApprovals()),
          ...(await ledger.listConversation('r1')).approvals,
          (await ledger.decideApproval({ runId: 'r1', turn: 3, call: 1 }, { status: 'approved', decidedBy: 'alice' }, at(1))).record,
        ];
        expect(returned).toHaveLength(8);
        for (const record of returned) expect(record).not.toHaveProperty('taskToken');
        expect(JSON.stringify(returned)).not.toContain('token-');
        expect(await ledger.getTaskToken({ runId: 'r1', turn: 3, call: 1 })).toBe('token-1');
        expect(await ledger.getTaskToken(budgetApproval(1))).toBe('token-b');
        expect(await ledger.getTaskToken({ runId: 'r1', turn: 3, call: 2 })).toBeUndefined();
        expect(await ledger.getTaskToken({ runId: 'r2', turn: 3, call: 1 })).toBeUndefined();
      });

      it('finds nothing for an unknown id, call or run', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        expect(await ledger.findApproval('apv_unknown')).toBeUndefined();
        expect(await ledger.getApproval('r1', 3, 2)).toBeUndefined();
        expect(await ledger.getApproval('r2', 3, 1)).toBeUndefined();
      });

      it('keeps the opaque id and refreshes the token when the approval is requested again', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const again = await ledger.upsertApproval(approval({ approvalId: 'apv_other000000000000' }), 'token-2');
        expect(again).toMatchObject({ approvalId: 'apv_0123456789abcdef', status: 'pending' });
        expect(await ledger.getTaskToken({ runId: 'r1', turn: 3, call: 1 })).toBe('token-2');
        expect(await ledger.findApproval('apv_other000000000000')).toBeUndefined();
      });

      it('records a decision once; the first decision stands', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const key = { runId: 'r1', turn: 3, call: 1 };
        const decisions = await Promise.all([
          ledger.decideApproval(key, { status: 'approved', decidedBy: 'alice' }, at(1)),
          ledger.decideApproval(key, { status: 'rejected', reason: 'no', decidedBy: 'bob' }, at(1)),
          ledger.decideApproval(key, { status: 'expired', decidedBy: 'timeout' }, at(1)),
        ]);
        const winners = decisions.filter((decision) => decision.decided);
        expect(winners).toHaveLength(1);
        for (const decision of decisions) expect(decision.record).toEqual(winners[0]!.record);
        expect(await ledger.getApproval('r1', 3, 1)).toEqual(winners[0]!.record);
      });

      it('records who decided, when, and why', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const { record } = await ledger.decideApproval({ runId: 'r1', turn: 3, call: 1 }, { status: 'rejected', reason: 'too much', decidedBy: 'bob' }, at(5));
        expect(record).toEqual({ ...approval(), status: 'rejected', reason: 'too much', decidedBy: 'bob', decidedAt: at(5).toISOString() });
        expect(await ledger.findApproval('apv_0123456789abcdef')).toEqual(record);
      });

      it('records how a decision came, its MAC, the wait and the link it used', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const decision = { status: 'approved', decidedBy: 'alice@example.com', decidedVia: 'link', decisionMac: 'bWFj', waitedMs: 29_000, linkId: 'link-1' } as const;
        const { record } = await ledger.decideApproval({ runId: 'r1', turn: 3, call: 1 }, decision, at(5));
        expect(record).toEqual({ ...approval(), status: 'approved', reason: '', decidedBy: 'alice@example.com', decidedVia: 'link', decisionMac: 'bWFj', waitedMs: 29_000, usedLinks: ['link-1'], decidedAt: at(5).toISOString() });
        expect(await ledger.findApproval('apv_0123456789abcdef')).toEqual(record);
      });

      it('records the first of two approvals once, and only on a pending approval', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const key = { runId: 'r1', turn: 3, call: 1 };
        const first = { by: 'bob@example.com', via: 'link', at: at(2).toISOString() } as const;
        const tries = await Promise.all([ledger.recordFirstApproval(key, first, 'link-b'), ledger.recordFirstApproval(key, { ...first, by: 'carol' })]);
        expect(tries.filter((attempt) => attempt.recorded)).toHaveLength(1);
        const stored = await ledger.getApproval('r1', 3, 1);
        expect(stored).toMatchObject({ status: 'pending', firstApproval: { via: 'link' } });
        expect(await ledger.listPendingApprovals()).toHaveLength(1);
        const { record } = await ledger.decideApproval(key, { status: 'approved', decidedBy: 'dave', linkId: 'link-d' }, at(3));
        expect(record.firstApproval).toEqual(stored!.firstApproval);
        expect(record.usedLinks).toEqual([...(stored!.usedLinks ?? []), 'link-d']);
        expect(await ledger.recordFirstApproval(key, first)).toMatchObject({ recorded: false, record: { status: 'approved' } });
      });

      it('records an empty reason when none is given', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const { record } = await ledger.decideApproval({ runId: 'r1', turn: 3, call: 1 }, { status: 'approved', decidedBy: 'alice' }, at(5));
        expect(record.reason).toBe('');
      });

      it('lets one of 20 concurrent deciders decide', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        const decisions = await Promise.all(
          Array.from({ length: 20 }, (_, index) =>
            ledger.decideApproval({ runId: 'r1', turn: 3, call: 1 }, { status: index % 2 ? 'approved' : 'rejected', decidedBy: `person${index}` }, at(1)),
          ),
        );
        expect(decisions.filter((decision) => decision.decided)).toHaveLength(1);
        expect(new Set(decisions.map((decision) => decision.record.decidedBy)).size).toBe(1);
      });

      it('fails to decide an approval that does not exist', async () => {
        await expect(ledger.decideApproval({ runId: 'r1', turn: 3, call: 1 }, { status: 'approved', decidedBy: 'alice' }, at(1))).rejects.toThrow(
          /no approval/,
        );
      });

      it('lists only pending approvals, and a decided one leaves the list', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        await ledger.upsertApproval(approval({ approvalId: 'apv_second00000000000', call: 2 }), 'token-1');
        expect((await ledger.listPendingApprovals()).map((pending) => pending.approvalId).sort()).toEqual([
          'apv_0123456789abcdef',
          'apv_second00000000000',
        ]);
        await ledger.decideApproval({ runId: 'r1', turn: 3, call: 2 }, { status: 'approved', decidedBy: 'alice' }, at(1));
        expect((await ledger.listPendingApprovals()).map((pending) => pending.approvalId)).toEqual(['apv_0123456789abcdef']);
        // A decided approval is not re-armed by a late request: its decision is returned.
        expect(await ledger.upsertApproval(approval({ call: 2 }), 'token-9')).toMatchObject({ status: 'approved' });
        expect(await ledger.getTaskToken({ runId: 'r1', turn: 3, call: 2 })).toBe('token-1');
        expect((await ledger.listPendingApprovals()).map((pending) => pending.approvalId)).toEqual(['apv_0123456789abcdef']);
      });

      it('lists pending approvals of every run, soonest deadline first', async () => {
        await ledger.upsertApproval(approval({ approvalId: 'apv_b', runId: 'r2', decideBy: at(300).toISOString() }), 'token-1');
        await ledger.upsertApproval(approval({ approvalId: 'apv_a', call: 1, decideBy: at(200).toISOString() }), 'token-1');
        await ledger.upsertApproval(approval({ approvalId: 'apv_c', call: 2, decideBy: at(100).toISOString() }), 'token-1');
        expect((await ledger.listPendingApprovals()).map((pending) => pending.approvalId)).toEqual(['apv_c', 'apv_a', 'apv_b']);
      });

      it('lists nothing when nothing is pending', async () => {
        expect(await ledger.listPendingApprovals()).toEqual([]);
      });

      // Decisions (a person's, approvals/decision.ts, and the expiry sweep's) are recorded owed to their
      // executions until delivered (steps/expire-approvals.ts): listed with `undelivered` until markDelivered, never as pending.
      it('lists a decision recorded undelivered only when asked for them, until it is marked delivered', async () => {
        const key = { runId: 'r1', turn: 3, call: 1 };
        await ledger.upsertApproval(approval(), 'token-1');
        await ledger.upsertApproval(approval({ approvalId: 'apv_second00000000000', call: 2 }), 'token-2');
        await ledger.decideApproval(key, { status: 'expired', decidedBy: 'timeout', undelivered: true }, at(1));
        await ledger.decideApproval({ ...key, call: 2 }, { status: 'approved', decidedBy: 'alice' }, at(1));
        expect(await ledger.listPendingApprovals()).toEqual([]);
        expect((await ledger.listPendingApprovals({ undelivered: true })).map((listed) => [listed.approvalId, listed.status])).toEqual([['apv_0123456789abcdef', 'expired']]);
        expect(await ledger.getApproval('r1', 3, 1)).toMatchObject({ status: 'expired', undelivered: true });
        await ledger.markDelivered(key);
        expect(await ledger.listPendingApprovals({ undelivered: true })).toEqual([]);
        const delivered = await ledger.getApproval('r1', 3, 1);
        expect(delivered).toMatchObject({ status: 'expired', decidedBy: 'timeout' });
        expect(delivered).not.toHaveProperty('undelivered');
        // Again, or on a decision never marked: nothing changes.
        await ledger.markDelivered(key);
        await ledger.markDelivered({ ...key, call: 2 });
        expect(await ledger.getApproval('r1', 3, 1)).toEqual(delivered);
        expect(await ledger.getApproval('r1', 3, 2)).toMatchObject({ status: 'approved', decidedBy: 'alice' });
      });
    });

    describe('budget extensions', () => {
      it('keeps a budget approval apart from the call approvals, found by budget, extension and id', async () => {
        await ledger.upsertApproval(approval(), 'token-1');
        await ledger.upsertApproval(budgetApproval(1), 'token-1');
        expect(await ledger.getBudgetApproval('r1', 'steps', 1)).toEqual(budgetApproval(1));
        expect(await ledger.getBudgetApproval('r1', 'steps', 2)).toBeUndefined();
        expect(await ledger.getBudgetApproval('r1', 'tokens', 1)).toBeUndefined();
        expect(await ledger.findApproval('apv_budget_steps_1')).toEqual(budgetApproval(1));
        expect(await ledger.getApproval('r1', 3, 1)).toEqual(approval());
      });

      it('decides a budget approval by its budget key, once', async () => {
        await ledger.upsertApproval(budgetApproval(1), 'token-1');
        const key = { runId: 'r1', turn: 0, call: 0, budget: budgetApproval(1).budget };
        expect(await ledger.decideApproval(key, { status: 'approved', decidedBy: 'alice' }, at(1))).toMatchObject({ decided: true, record: { status: 'approved' } });
        expect(await ledger.decideApproval(key, { status: 'rejected', decidedBy: 'bob' }, at(2))).toMatchObject({ decided: false, record: { decidedBy: 'alice' } });
        expect(await ledger.getBudgetApproval('r1', 'steps', 1)).toMatchObject({ status: 'approved' });
      });

      it('applies an approved extension once', async () => {
        await ledger.createRun(run('r1'));
        const extended = await ledger.applyBudgetExtension('r1', 'steps', 1, 600);
        expect(extended).toMatchObject({ config: { maxSteps: 600, maxTokens: 600_000 }, budgetExtensions: { steps: 1 } });
        expect(await ledger.applyBudgetExtension('r1', 'steps', 1, 900)).toEqual(extended);
        expect(await ledger.getRun('r1')).toEqual(extended);
      });

      it('applies the next extension, and ignores a stale one', async () => {
        await ledger.createRun(run('r1'));
        await ledger.applyBudgetExtension('r1', 'steps', 1, 600);
        await ledger.applyBudgetExtension('r1', 'steps', 2, 900);
        // The limit the run started with is kept from the first extension (what replay starts the run on).
        expect(await ledger.applyBudgetExtension('r1', 'steps', 1, 600)).toMatchObject({ config: { maxSteps: 900 }, budgetExtensions: { steps: 2 }, budgetsBeforeExtension: { maxSteps: 400 } });
      });

      it('counts extensions per budget', async () => {
        await ledger.createRun(run('r1'));
        await ledger.applyBudgetExtension('r1', 'steps', 1, 600);
        expect(await ledger.applyBudgetExtension('r1', 'dollars', 1, 7.5)).toMatchObject({
          config: { maxSteps: 600, maxDollars: 7.5 },
          budgetExtensions: { steps: 1, dollars: 1 },
          budgetsBeforeExtension: { maxSteps: 400, maxDollars: 5 },
        });
      });

      it('applies one of concurrent applications of the same extension', async () => {
        await ledger.createRun(run('r1'));
        await Promise.all([500, 600, 700].map((limit) => ledger.applyBudgetExtension('r1', 'tokens', 1, limit)));
        expect((await ledger.getRun('r1'))!.config.maxTokens).toBe(500);
      });

      it('fails for an unknown run', async () => {
        await expect(ledger.applyBudgetExtension('nope', 'steps', 1, 600)).rejects.toThrow();
      });
    });
  });
}
