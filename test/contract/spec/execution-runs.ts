import { describe, expect, it } from 'vitest';
import { useLedger, type MakeLedger } from './support.js';

/** Which run an execution drives (`ExecutionRunLedger`): what the stack's shared recovery reads without the agent's code. */
export function executionRunsSpec(make: MakeLedger): void {
  describe('execution runs', () => {
    const { ledger } = useLedger(make);
    const arn = (name: string) => `arn:aws:states:us-east-1:000000000000:execution:Fleet-agent-a:${name}`;

    it('gives back the run StartRun noted for an execution, and none for an execution it did not note', async () => {
      await ledger.noteExecutionRun(arn('nightly-1'), 'refunds-2026-11-28');
      expect(await ledger.runOfExecution(arn('nightly-1'))).toBe('refunds-2026-11-28');
      expect(await ledger.runOfExecution(arn('nightly-2'))).toBeUndefined();
    });

    it('notes the same run again when an execution is delivered twice (a plain put)', async () => {
      await ledger.noteExecutionRun(arn('nightly-1'), 'refunds-2026-11-28');
      await ledger.noteExecutionRun(arn('nightly-1'), 'refunds-2026-11-28');
      expect(await ledger.runOfExecution(arn('nightly-1'))).toBe('refunds-2026-11-28');
    });

    it('is no run record: lists of runs do not show it', async () => {
      await ledger.noteExecutionRun(arn('nightly-1'), 'refunds-2026-11-28');
      expect(await ledger.listRuns()).toEqual([]);
    });
  });
}
