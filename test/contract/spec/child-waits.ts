import { describe, expect, it } from 'vitest';
import { approval } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/** The child waits (`ChildWaitLedger`): a parent's tool call waiting for its child run, by task token. */
export function childWaitsSpec(make: MakeLedger): void {
  describe('child waits', () => {
    const { ledger } = useLedger(make);

    it('stores the token of a call\'s wait and gives it back; another call, run or an approval\'s token is another key', async () => {
      await ledger.storeChildWait({ runId: 'r1', turn: 2, call: 1 }, 'wait-1');
      await ledger.upsertApproval(approval({ turn: 2, call: 1 }), 'approval-1');
      expect(await ledger.getChildWait({ runId: 'r1', turn: 2, call: 1 })).toBe('wait-1');
      expect(await ledger.getTaskToken({ runId: 'r1', turn: 2, call: 1 })).toBe('approval-1');
      expect(await ledger.getChildWait({ runId: 'r1', turn: 2, call: 2 })).toBeUndefined();
      expect(await ledger.getChildWait({ runId: 'r2', turn: 2, call: 1 })).toBeUndefined();
    });

    it('replaces the token an earlier execution of the parent stored (the one waiting now wins)', async () => {
      const wait = { runId: 'r1', turn: 1, call: 3 };
      await ledger.storeChildWait(wait, 'wait-old');
      await ledger.storeChildWait(wait, 'wait-new');
      expect(await ledger.getChildWait(wait)).toBe('wait-new');
    });

    it('keeps the token out of every record it returns', async () => {
      await ledger.storeChildWait({ runId: 'r1', turn: 1, call: 1 }, 'wait-secret');
      const { turns, calls, approvals } = await ledger.listConversation('r1');
      expect(JSON.stringify([turns, calls, approvals])).not.toContain('wait-secret');
    });
  });
}
