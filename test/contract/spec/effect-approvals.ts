import { describe, expect, it } from 'vitest';
import { at } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/**
 * The effect-approvals role (`EffectApprovalLedger`): one approval request per effect named by a
 * business key, shared by the agent's runs — the first call to ask leads, the others asking for the
 * same subject follow (one conditional write decides), another subject asks apart.
 */
export function effectApprovalsSpec(make: MakeLedger): void {
  describe('one approval request per effect, shared across runs', () => {
    const { ledger } = useLedger(make);
    const key = 'refunds:issue_refund:rr_007';
    const subject = 'a'.repeat(64);
    const ref = (runId: string, approvalId = `apv_${runId}`) => ({ approvalId, runId, turn: 3, call: 1 });
    const share = (runId: string, options: { subject?: string; replacing?: string } = {}) =>
      ledger.shareApproval({ key, subject: options.subject ?? subject, approval: ref(runId), ...(options.replacing && { replacing: options.replacing }) }, at(0));

    it('lets the first call lead and the next one, asking the same, follow it', async () => {
      expect(await share('a')).toEqual({ role: 'leader', leader: ref('a') });
      expect(await share('b')).toEqual({ role: 'follower', leader: ref('a') });
      expect(await ledger.getEffectApproval(key)).toMatchObject({ kind: 'effectApproval', key, subject, leader: ref('a'), followers: [ref('b')] });
    });

    it('answers a call asking again as before, and lists a follower once', async () => {
      await share('a');
      await share('b');
      expect(await ledger.shareApproval({ key, subject, approval: { ...ref('a'), approvalId: 'apv_retry' } }, at(1))).toEqual({ role: 'leader', leader: ref('a') });
      expect(await share('b')).toEqual({ role: 'follower', leader: ref('a') });
      expect((await ledger.getEffectApproval(key))!.followers).toEqual([ref('b')]);
    });

    it('keeps a call asking for another subject under the same key apart, changing nothing', async () => {
      await share('a');
      expect(await share('c', { subject: 'b'.repeat(64) })).toEqual({ role: 'apart' });
      expect((await ledger.getEffectApproval(key))!.followers).toEqual([]);
    });

    it('lets a call replace a leader it names (found expired undecided), and no other', async () => {
      await share('a');
      expect(await share('d', { replacing: 'apv_someone_else' })).toEqual({ role: 'follower', leader: ref('a') });
      expect(await share('e', { replacing: 'apv_a' })).toEqual({ role: 'leader', leader: ref('e') });
      expect(await ledger.getEffectApproval(key)).toMatchObject({ leader: ref('e'), followers: [] });
    });

    it('lets exactly one of 50 racing runs lead; the other 49 follow it', async () => {
      const answers = await Promise.all(Array.from({ length: 50 }, (_, index) => share(`r${index}`)));
      const leaders = answers.filter((answer) => answer.role === 'leader');
      expect(leaders).toHaveLength(1);
      const leader = (leaders[0] as { leader: { runId: string } }).leader;
      expect(answers.filter((answer) => answer.role === 'follower' && answer.leader.runId === leader.runId)).toHaveLength(49);
      expect((await ledger.getEffectApproval(key))!.followers).toHaveLength(49);
    });
  });
}
