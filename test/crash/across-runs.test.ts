import { describe, expect, it } from 'vitest';
import { CrashPoint, type CrashPoint as Point } from '../../local/runtime/crash.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { openLedger } from '../../cli/state.js';
import { duplicates, ledgerOf, providerJournal, savepoint, workspace } from '../support/cli-process.js';

/**
 * The same day under two run ids, with a kill at every boundary of one of them (issue 27, item 1):
 * run A is killed (SIGKILL) at a boundary of its refund; run B of the same day then runs to the
 * end in the next process, whose watchdog resumes A (a third process would, if it did not). Each
 * refund request is paid once in the provider's journal, and both runs record it as issued — the
 * refund is claimed by its refund request id across the agent's runs. (Two processes cannot open one state directory at once:
 * the runs at once, concurrently, are test/engine/effects.test.ts.)
 */

const day = makeSampleDay(7, { plain: 1, already_refunded: 0, mismatch: 1, large: 0 });

const CHAIN: Point[] = [CrashPoint.ModelCall, CrashPoint.ModelRecorded, CrashPoint.BeforeClaim, CrashPoint.AfterClaim, CrashPoint.AfterCommit, CrashPoint.AfterRecord];

describe.concurrent('two runs of one day, one killed at each boundary of its refund', { timeout: 300_000 }, () => {
  it.each(CHAIN)('killed at %s: the refund is paid once and recorded by both runs', async (point) => {
    const { stateDir, args } = await workspace(`across-${point}`, day);
    const crashed = await savepoint(args('run', '--run-id', 'day-a', '--json', '--crash-at', `${point}:issue_refund`));
    expect(crashed.signal, `${point}: ${crashed.stderr}`).toBe('SIGKILL');

    const second = await savepoint(args('run', '--run-id', 'day-b', '--json'));
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ status: 'succeeded', inFlight: 0 });

    // B's engine may have resumed A already (its watchdog finds A's dead execution, and today it
    // does, to A's end); if not, A is resumed by a process of its own. Either way A ends. Not a
    // third process to report a run the ledger holds finished: resume is the matrices' subject.
    if ((await ledgerOf(stateDir, 'day-a')).run?.status !== 'succeeded') {
      const resumed = await savepoint(args('resume', 'day-a', '--json'));
      expect(resumed.code, resumed.stderr).toBe(0);
    }
    const a = await ledgerOf(stateDir, 'day-a');
    expect(a.run).toMatchObject({ status: 'succeeded' });
    expect(a.calls.filter((record) => record.status !== 'completed')).toEqual([]);

    expect(duplicates(stateDir)).toEqual([]);
    const refunds = providerJournal(stateDir).filter((entry) => entry.kind === 'refund');
    expect(refunds).toHaveLength(1);
    const request = refunds[0]!.record.refundRequestId!;
    expect(refunds[0]!.key).toBe(`refund-reconciler:issue_refund:${request}`);
    // Each run that asked for the refund recorded the provider's one refund (a run that saw the
    // payment refunded already did not ask).
    for (const runId of ['day-a', 'day-b']) {
      const { call } = await ledgerOf(stateDir, runId);
      const refund = call('issue_refund');
      if (refund) expect(refund, runId).toMatchObject({ status: 'completed', outcome: 'ok', idempotencyKey: refunds[0]!.key });
      if (refund) expect(JSON.parse(refund.result!), runId).toEqual(refunds[0]!.record);
    }
    const { ledger, close } = await openLedger(stateDir);
    try {
      expect(await ledger.getEffect(refunds[0]!.key)).toMatchObject({ status: 'completed', outcome: 'ok' });
    } finally {
      await close();
    }
  });
});
