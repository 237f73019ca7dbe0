import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { startAnthropicServer } from '../../sim/wire/anthropic-server.js';
import type { WireServer } from '../../sim/wire/http.js';
import { CrashPoint, TOOL_CALL_BOUNDARIES, type CrashPoint as Point } from '../../local/runtime/crash.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { duplicates, ledgerOf, providerJournal, savepoint, workspace } from '../support/cli-process.js';

/**
 * The crash matrix: every step boundary × every side-effecting tool. Each engine is a real process
 * that the crash injection ends with SIGKILL; the next one resumes the run. For each tool the same
 * tool call dies once at every boundary in turn — six processes killed in a row — and the run
 * still finishes with each refund, review and report made exactly once.
 */

const runId = 'refunds-2026-11-28';
/** One plain refund and one amount mismatch: issue_refund, flag_for_review and post_report, once each. */
const day = makeSampleDay(7, { plain: 1, already_refunded: 0, mismatch: 1, large: 0 });
const KIND = { issue_refund: 'refund', flag_for_review: 'review', post_report: 'report' } as const;
type Tool = keyof typeof KIND;

/**
 * The boundaries in the order one tool call meets them: the model asks for it, then it runs. A
 * crash at after-record leaves the call completed, so the run never calls the tool again and
 * `tool-returned` cannot follow it in the same chain: it has a chain of its own (below).
 */
const CHAIN = TOOL_CALL_BOUNDARIES.filter((point) => point !== CrashPoint.ToolReturned);

/** What the ledger and the provider hold for the tool call right after a crash at each boundary. */
const EXPECTED: Record<Point, { call: 'none' | 'in_flight' | 'completed'; committed: number }> = {
  [CrashPoint.ModelCall]: { call: 'none', committed: 0 },
  [CrashPoint.ModelRecorded]: { call: 'none', committed: 0 },
  [CrashPoint.BeforeClaim]: { call: 'none', committed: 0 },
  [CrashPoint.AfterClaim]: { call: 'in_flight', committed: 0 },
  // The unknown-outcome window: the provider committed, the ledger does not know.
  [CrashPoint.AfterCommit]: { call: 'in_flight', committed: 1 },
  [CrashPoint.AfterRecord]: { call: 'completed', committed: 1 },
  // CallTool returned: its record is durable (a completion it did not wait for would be missing here).
  [CrashPoint.ToolReturned]: { call: 'completed', committed: 1 },
  [CrashPoint.AwaitingApproval]: { call: 'none', committed: 0 },
  // The refund reconciler runs no child agents (test/crash/child-runs.test.ts crashes there).
  [CrashPoint.ChildStarted]: { call: 'none', committed: 0 },
};

// The strict local Anthropic Messages API, for the matrix on a real adapter (the official SDK).
let anthropic: WireServer;
beforeAll(async () => {
  anthropic = await startAnthropicServer({ policy: refundReconciler.dev!.policy!, apiKey: 'sk-ant-crash', models: ['claude-haiku-4-5'] });
});
afterAll(() => anthropic.close());

// Each case starts up to eight engine processes, several cases at a time.
describe.concurrent('the crash matrix', { timeout: 300_000 }, () => {
  it.each(Object.keys(KIND) as Tool[])('%s: a crash at every boundary in turn, each recovered by the next process', async (tool) => {
    const { stateDir, args } = await workspace(`matrix-${tool}`, day);
    for (const [index, point] of CHAIN.entries()) {
      const command = index === 0 ? ['run'] : ['resume', runId];
      const crashed = await savepoint(args(...command, '--json', '--crash-at', `${point}:${tool}`));
      expect(crashed.signal, `${point}: ${crashed.stderr}`).toBe('SIGKILL');
      expect(crashed.stderr).toContain(`crash injected at ${point} (`);

      const { call } = await ledgerOf(stateDir, runId);
      const committed = providerJournal(stateDir).filter((entry) => entry.kind === KIND[tool]);
      expect(call(tool)?.status ?? 'none', point).toBe(EXPECTED[point].call);
      expect(committed, point).toHaveLength(EXPECTED[point].committed);
    }

    const finished = await savepoint(args('resume', runId, '--json'));
    expect(finished.code, finished.stderr).toBe(0);
    const report = JSON.parse(finished.stdout) as Record<string, any>;
    expect(report).toMatchObject({ status: 'succeeded', inFlight: 0, summary: { issued: 1, flagged: 1 } });

    // Each side effect exactly once at the provider; the ledger recorded the provider's first result.
    expect(duplicates(stateDir)).toEqual([]);
    const journal = providerJournal(stateDir);
    expect(journal.map((entry) => entry.kind).sort()).toEqual(['refund', 'report', 'review']);
    const { calls, call } = await ledgerOf(stateDir, runId);
    expect(calls.filter((record) => record.status !== 'completed')).toEqual([]);
    const entry = journal.find((committed) => committed.kind === KIND[tool])!;
    expect(entry.key).toBe(call(tool)!.idempotencyKey);
    expect(JSON.parse(call(tool)!.result!)).toEqual(entry.record);
    // Claimed by the process that died after its claim, then taken over with the same key.
    expect(call(tool)!.attempts).toBeGreaterThanOrEqual(2);
  });

  it('a crash as CallTool returns, for each tool in turn: its record is durable, and nothing is sent again', async () => {
    const { stateDir, args } = await workspace('matrix-returned', day);
    // In the order the run calls them: the review of the mismatch, the refund, the report.
    for (const [index, tool] of (['flag_for_review', 'issue_refund', 'post_report'] as const).entries()) {
      const command = index === 0 ? ['run'] : ['resume', runId];
      const crashed = await savepoint(args(...command, '--json', '--crash-at', `${CrashPoint.ToolReturned}:${tool}`));
      expect(crashed.signal, `${tool}: ${crashed.stderr}`).toBe('SIGKILL');
      expect(crashed.stderr).toContain(`crash injected at ${CrashPoint.ToolReturned} (${tool})`);
      const { call } = await ledgerOf(stateDir, runId);
      expect(call(tool)?.status ?? 'none', tool).toBe(EXPECTED[CrashPoint.ToolReturned].call);
      expect(providerJournal(stateDir).filter((entry) => entry.kind === KIND[tool]), tool).toHaveLength(EXPECTED[CrashPoint.ToolReturned].committed);
    }
    const finished = await savepoint(args('resume', runId, '--json'));
    expect(finished.code, finished.stderr).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({ status: 'succeeded', inFlight: 0, summary: { issued: 1, flagged: 1 } });
    expect(duplicates(stateDir)).toEqual([]);
    // Each call was recorded by the process that made it: none was claimed again.
    const { calls } = await ledgerOf(stateDir, runId);
    expect(calls.filter((record) => record.name in KIND).map((record) => record.attempts)).toEqual([1, 1, 1]);
  });

  // The adapter is only between the boundaries of the model call; those of the tool call after it
  // are the same whatever the model (the case above crashes issue_refund at each of them).
  it('issue_refund on a real adapter (Anthropic, through its SDK): a crash at each boundary of the model call, paid once', async () => {
    const env = { ANTHROPIC_API_KEY: 'sk-ant-crash', ANTHROPIC_BASE_URL: anthropic.url };
    const { stateDir, args } = await workspace('matrix-anthropic', day);
    for (const [index, point] of [CrashPoint.ModelCall, CrashPoint.ModelRecorded].entries()) {
      // The model is the run's from its start: a resume keeps it.
      const command = index === 0 ? ['run', '--model', 'anthropic:claude-haiku-4-5'] : ['resume', runId];
      const crashed = await savepoint(args(...command, '--json', '--crash-at', `${point}:issue_refund`), { env });
      expect(crashed.signal, `${point}: ${crashed.stderr}`).toBe('SIGKILL');
      const { call } = await ledgerOf(stateDir, runId);
      expect(call('issue_refund')?.status ?? 'none', point).toBe(EXPECTED[point].call);
    }
    const finished = await savepoint(args('resume', runId, '--json'), { env });
    expect(finished.code, finished.stderr).toBe(0);
    const report = JSON.parse(finished.stdout) as Record<string, any>;
    expect(report).toMatchObject({ status: 'succeeded', model: 'anthropic:claude-haiku-4-5', inFlight: 0, summary: { issued: 1, flagged: 1 } });
    expect(duplicates(stateDir)).toEqual([]);
    expect(providerJournal(stateDir).map((entry) => entry.kind).sort()).toEqual(['refund', 'report', 'review']);
    // Every turn went to the provider: the turn that died unrecorded (model-call) was asked again.
    expect(anthropic.acceptedBodies().length).toBeGreaterThan(report['modelTurns']);
  });

  it('issue_refund waiting for an approval: the process dies, the decision is made while no engine runs, the resume delivers it', async () => {
    const { stateDir, args } = await workspace('matrix-approval', makeSampleDay(7, { plain: 0, already_refunded: 0, mismatch: 0, large: 1 }));
    const crashed = await savepoint(args('run', '--approve', 'wait', '--approval-timeout', '600', '--crash-at', 'awaiting-approval:issue_refund'));
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');

    const pending = JSON.parse((await savepoint(['--state-dir', stateDir, 'approvals', '--json'])).stdout) as { approvals: { approvalId: string }[] };
    expect(pending.approvals).toHaveLength(1);
    const approvalId = pending.approvals[0]!.approvalId;
    expect(await savepoint(['--state-dir', stateDir, 'approve', approvalId, '--reason', 'checked while the engine was down'])).toMatchObject({
      code: 0,
      stdout: expect.stringContaining('recorded; the run continues when it resumes'),
    });

    const finished = await savepoint(args('resume', runId, '--json'));
    expect(finished.code, finished.stderr).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({ status: 'succeeded', inFlight: 0, summary: { issued: 1 }, approvals: { approved: 1, pending: 0 } });
    expect(providerJournal(stateDir).filter((entry) => entry.kind === 'refund')).toHaveLength(1);
    const { approvals } = await ledgerOf(stateDir, runId);
    expect(approvals).toMatchObject([{ approvalId, status: 'approved', reason: 'checked while the engine was down' }]);
  });

  it('issue_refund waiting for an approval: the approval stays pending across the crash and is decided after the restart', async () => {
    const { stateDir, args } = await workspace('matrix-pending', makeSampleDay(7, { plain: 0, already_refunded: 0, mismatch: 0, large: 1 }));
    const crashed = await savepoint(args('run', '--approve', 'wait', '--approval-timeout', '600', '--crash-at', 'awaiting-approval'));
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    const before = (await ledgerOf(stateDir, runId)).approvals;
    expect(before).toMatchObject([{ status: 'pending' }]);

    // The next engine asks again for the approval the dead one was waiting on, and approves it.
    const finished = await savepoint(args('resume', runId, '--json', '--approve', 'approve'));
    expect(finished.code, finished.stderr).toBe(0);
    expect(finished.stderr).toContain(`approval ${before[0]!.approvalId}: approved`);
    expect(JSON.parse(finished.stdout)).toMatchObject({ status: 'succeeded', summary: { issued: 1 }, approvals: { total: 1, approved: 1 } });
    expect(providerJournal(stateDir).filter((entry) => entry.kind === 'refund')).toHaveLength(1);
  });
});
