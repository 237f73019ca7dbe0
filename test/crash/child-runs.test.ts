import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CrashPoint } from '../../local/runtime/crash.js';
import { childRunId } from '../../lambdas/define.js';
import { turnCounts } from '../../lambdas/conversation/turns.js';
import { journalOf } from '../readme/fixtures/journal-notes.js';
import { ledgerOf, savepoint } from '../support/cli-process.js';
import { scratchDir } from '../support/scratch.js';

/**
 * A parent agent with a child agent (note-delegator runs journal-notes as its tool `delegate_note`)
 * under SIGKILL at every boundary of the child tool, each in a real engine process that the crash
 * injection ends; the next process resumes the parent. The child starts once (one child run, its
 * id derived from the parent's call) and its effect happens once (the notes provider's journal).
 */
const agent = new URL('./fixtures/note-delegator.dev.ts', import.meta.url).pathname;
const runId = 'delegated-note';
const child = childRunId(runId, 1, 'call_1');

/**
 * The boundaries in the order the child tool's call meets them (a crash at after-record leaves the
 * call completed, so `tool-returned` has a chain of its own, below): the parent's model, the
 * child's start, the child's own write, the parent's record.
 */
const CHAIN = [
  `${CrashPoint.ModelCall}:delegate_note`,
  `${CrashPoint.ModelRecorded}:delegate_note`,
  `${CrashPoint.ChildStarted}:journal-notes`,
  `${CrashPoint.AfterClaim}:save_note`,
  `${CrashPoint.AfterCommit}:save_note`,
  `${CrashPoint.AfterRecord}:save_note`,
  `${CrashPoint.AfterCommit}:delegate_note`,
  `${CrashPoint.AfterRecord}:delegate_note`,
] as const;

describe('child runs under SIGKILL', { timeout: 300_000 }, () => {
  it('a crash at every boundary of the child tool in turn: the child starts once, its note is saved once, its result is the tool result', async () => {
    const stateDir = join(scratchDir('savepoint-child-runs-'), 'state');
    const args = (...more: string[]) => ['--state-dir', stateDir, ...more, '--agent', agent];
    for (const [index, point] of CHAIN.entries()) {
      const command = index === 0 ? ['run', '--run-id', runId, '--input', JSON.stringify({ text: 'lunch at noon' })] : ['resume', runId];
      const crashed = await savepoint(args(...command, '--json', '--crash-at', point));
      expect(crashed.signal, `${point}: ${crashed.stderr}`).toBe('SIGKILL');
      expect(crashed.stderr).toContain(`crash injected at ${point.split(':')[0]} (`);
      // Never a second note, whatever died when.
      expect(new Set(journalOf(join(stateDir, 'notes.jsonl')).requests).size, point).toBeLessThanOrEqual(1);
    }
    const finished = await savepoint(args('resume', runId, '--json'));
    expect(finished.code, finished.stderr).toBe(0);
    const report = JSON.parse(finished.stdout) as Record<string, unknown>;
    expect(report).toMatchObject({ status: 'succeeded', inFlight: 0 });
    // The parent's report lists its child run.
    expect(report['children']).toEqual([{ runId: child, agent: 'journal-notes', tool: 'delegate_note', turn: 1, call: 1, status: 'succeeded' }]);

    // One child run, the one the parent's call derives; one note at the provider, under the child's one key.
    const parent = await ledgerOf(stateDir, runId);
    const call = parent.call('delegate_note')!;
    expect(call.status).toBe('completed');
    expect(JSON.parse(call.result!)).toMatchObject({ childRunId: child, status: 'succeeded' });
    const { run: childRun, call: childCall } = await ledgerOf(stateDir, child);
    expect(childRun).toMatchObject({ status: 'succeeded', parent: { runId, turn: 1, call: 1 }, config: { maxDollars: 0.5, maxTokens: 50_000 } });
    const journal = journalOf(join(stateDir, 'notes.jsonl'));
    expect(journal.saved.size).toBe(1);
    expect([...journal.saved]).toEqual([childCall('save_note')!.idempotencyKey]);
    // The child's spend replaced its reservation, once whatever crashed where (settled at the child's
    // end, and again by nobody: not by the parent's resumed CallTool): its own turns' and the child's.
    const own = parent.turns.map(turnCounts);
    const sum = (field: 'costMicros' | 'inputTokens' | 'outputTokens') => own.reduce((total, counts) => total + counts[field], 0);
    expect([parent.run!.costMicros, parent.run!.inputTokens, parent.run!.outputTokens]).toEqual([
      sum('costMicros') + childRun!.costMicros,
      sum('inputTokens') + childRun!.inputTokens,
      sum('outputTokens') + childRun!.outputTokens,
    ]);
    expect(parent.run!.childRunsOpen).toBe(0);

    // Replay answers the child tool from the parent's record: no child started, no live call.
    const replayed = await savepoint(args('replay', runId));
    expect(replayed.stdout, replayed.stderr).toMatch(new RegExp(`^${runId}: identical \\(.*; 0 live calls`));
    expect(new Set(journalOf(join(stateDir, 'notes.jsonl')).requests).size).toBe(1);
  });

  it('a crash as CallTool returns the child\'s result: the record is durable, no second child, no second note', async () => {
    const stateDir = join(scratchDir('savepoint-child-returned-'), 'state');
    const args = (...more: string[]) => ['--state-dir', stateDir, ...more, '--agent', agent];
    const crashed = await savepoint(args('run', '--run-id', runId, '--input', JSON.stringify({ text: 'lunch at noon' }), '--json', '--crash-at', `${CrashPoint.ToolReturned}:delegate_note`));
    expect(crashed.signal, crashed.stderr).toBe('SIGKILL');
    expect((await ledgerOf(stateDir, runId)).call('delegate_note')?.status).toBe('completed');
    const finished = await savepoint(args('resume', runId, '--json'));
    expect(finished.code, finished.stderr).toBe(0);
    expect(JSON.parse(finished.stdout)).toMatchObject({ status: 'succeeded', inFlight: 0 });
    expect(journalOf(join(stateDir, 'notes.jsonl')).requests).toHaveLength(1);
    expect((await ledgerOf(stateDir, child)).run).toMatchObject({ status: 'succeeded', executions: [expect.any(String)] });
  });
});
