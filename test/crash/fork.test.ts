import { describe, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { CrashPoint, TOOL_CALL_BOUNDARIES } from '../../local/runtime/crash.js';
import { duplicates, ledgerOf, providerJournal, savepoint, workspace } from '../support/cli-process.js';

/**
 * A `reuse` fork killed at every boundary of its first live step. The parent pays its refunds; the
 * fork starts at the turn whose model call asks for the first of them, so its first live step is
 * that model call and the refund it asks for. Each engine is a real process that the crash
 * injection ends with SIGKILL at the next boundary in turn; the next one resumes the fork. The
 * payments provider's journal is the judge: the fork pays none of the parent's refunds again.
 */
const day = makeSampleDay(11, { plain: 3, already_refunded: 0, mismatch: 0, large: 0 });
const runId = 'refunds-2026-11-28';

describe('a reuse fork killed at every boundary of its first live step', { timeout: 300_000 }, () => {
  it('pays none of the parent refunds again, and verifies on both runs', async () => {
    const { stateDir, args } = await workspace('fork-crash', day);
    // The parent itself dies twice — with a refund paid and not recorded, then in the middle of a
    // model call — and is resumed each time.
    for (const [command, crashAt] of [[['run', '--run-id', runId], 'after-commit:issue_refund'], [['resume', runId], 'model-call:issue_refund']] as const) {
      const crashed = await savepoint(args(...command, '--json', '--crash-at', crashAt));
      expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    }
    const parent = await savepoint(args('resume', runId, '--json'));
    expect(parent.code, parent.stderr).toBe(0);
    const refunds = () => providerJournal(stateDir).filter((entry) => entry.kind === 'refund');
    const paid = refunds().length;
    expect(paid).toBe(3);
    const { run: parentRun, calls } = await ledgerOf(stateDir, runId);
    expect(parentRun!.executions.length).toBe(3);

    // Replay of the run that crashed and was resumed: identical, with no live call.
    const replayed = await savepoint(['--state-dir', stateDir, 'replay', runId, '--agent', 'refund-reconciler', '--json']);
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ identical: true, live: { model: 0, tools: 0 } });
    expect(refunds()).toHaveLength(paid);
    const at = calls.find((call) => call.name === 'issue_refund')!.turn;

    const forkId = 'fork-crashed';
    const seen: string[] = [];
    // The refund the parent made is answered from its record without a claim: a call and its
    // business-key effect are claimed in one write, and an effect the parent completed writes
    // nothing. So the fork's step meets every boundary but after-claim (and tool-returned, which
    // follows after-record only in a run that calls the tool again: test/crash/matrix.test.ts).
    const boundaries = TOOL_CALL_BOUNDARIES.filter((point) => point !== CrashPoint.AfterClaim && point !== CrashPoint.ToolReturned);
    for (const [index, point] of boundaries.entries()) {
      const command = index === 0 ? ['fork', runId, '--at', String(at), '--run-id', forkId, '--yes'] : ['resume', forkId];
      const crashed = await savepoint(args(...command, '--json', '--crash-at', `${point}:issue_refund`));
      expect(crashed.signal, `${point}: ${crashed.stderr}`).toBe('SIGKILL');
      expect(crashed.stderr).toContain(`crash injected at ${point} (`);
      seen.push(point);
      expect(refunds(), point).toHaveLength(paid);
    }
    expect(seen).toEqual(boundaries);

    const finished = await savepoint(args('resume', forkId, '--json'));
    expect(finished.code, finished.stderr).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({ status: 'succeeded', inFlight: 0 });
    expect(refunds()).toHaveLength(paid);
    expect(duplicates(stateDir)).toEqual([]);
    // The refund of the killed step is the parent's, by the same idempotency key, recorded once and
    // never claimed (no engine that died around it sent anything). (The fork's reads are live: it sees the other two requests
    // refunded already, by the parent, and skips them.)
    const forked = (await ledgerOf(stateDir, forkId)).calls.filter((call) => call.name === 'issue_refund');
    expect(forked.length).toBeGreaterThan(0);
    for (const refund of forked) {
      const same = calls.find((call) => call.name === 'issue_refund' && call.idempotencyKey === refund.idempotencyKey);
      expect(refund.result).toBe(same?.result);
    }
    expect(forked[0]).toMatchObject({ turn: at, outcome: 'ok' });
    expect(forked[0]!.attempts).toBe(1);
    const verified = await savepoint(['--state-dir', stateDir, 'verify', '--all']);
    expect(verified.stdout, verified.stderr).toMatch(/2 of 2 runs verify/);
  });

  it("finishes a fork's copy on resume when its StartRun died in the middle of it", async () => {
    const { stateDir, args } = await workspace('fork-copy-crash', day);
    expect((await savepoint(args('run', '--run-id', runId, '--json'))).code).toBe(0);
    const paid = providerJournal(stateDir).filter((entry) => entry.kind === 'refund').length;
    // Copying turn 2's get_order, StartRun announces the boundary after it records the call.
    const crashed = await savepoint(args('fork', runId, '--at', '5', '--run-id', 'fork-cut', '--yes', '--json', '--crash-at', 'after-record:get_order'));
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    const cut = await ledgerOf(stateDir, 'fork-cut');
    expect(cut.run?.forkedFrom).toMatchObject({ runId, turn: 5 });
    const parent = await ledgerOf(stateDir, runId);
    expect(cut.calls.length).toBeLessThan(parent.calls.filter((call) => call.turn < 5).length);

    const finished = await savepoint(args('resume', 'fork-cut', '--json'));
    expect(finished.code, finished.stderr).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({ status: 'succeeded', inFlight: 0 });
    const copied = (await ledgerOf(stateDir, 'fork-cut')).calls.filter((call) => call.turn < 5);
    expect(copied.map((call) => [call.turn, call.call, call.name, call.result])).toEqual(parent.calls.filter((call) => call.turn < 5).map((call) => [call.turn, call.call, call.name, call.result]));
    expect(providerJournal(stateDir).filter((entry) => entry.kind === 'refund')).toHaveLength(paid);
    const verified = await savepoint(['--state-dir', stateDir, 'verify', '--all']);
    expect(verified.stdout, verified.stderr).toMatch(/2 of 2 runs verify/);
  });
});
