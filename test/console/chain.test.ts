import type { HistoryEvent } from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { siblingArn, successorName } from '../../lambdas/guards/history.js';
import type { RunRecord } from '../../lambdas/records/ledger-records.js';
import { recoveryExecutionName } from '../../lambdas/steps/recover-run.js';
import type { HistoryLine, HistorySource } from '../../console/history.js';
import { sfnHistorySource } from '../../console/stack.js';
import { executionLinks } from '../../console/views.js';

const SM = 'arn:aws:states:us-east-1:123456789012:stateMachine:Agent';
const arn = (name: string) => `${SM.replace(':stateMachine:', ':execution:')}:${name}`;

describe('the execution chain of a run', () => {
  const first = arn('r1');
  const c1 = siblingArn(first, successorName('r1', 1));
  const recovery = siblingArn(first, recoveryExecutionName('r1', 1));
  const resumed = arn('r1-lzx1');
  const c4 = siblingArn(first, successorName('r1', 4));
  const run = {
    runId: 'r1',
    status: 'running',
    executionArn: c4,
    executions: [first, c1, recovery, resumed, c4],
    config: { historyEventsBeforeHandoff: 20_000 },
    startedBy: 'alice',
    recovery: { attempts: 1, withoutProgress: 0, atSteps: 10, key: 'k', reason: 'execution r1-c1 FAILED: Agent.Transient', executionName: recoveryExecutionName('r1', 1), at: '2026-11-30T00:00:00.000Z' },
  } as unknown as RunRecord;
  const statuses: Record<string, string> = { [first]: 'SUCCEEDED', [c1]: 'FAILED', [recovery]: 'FAILED', [resumed]: 'SUCCEEDED', [c4]: 'RUNNING' };
  const history: HistorySource = {
    linesOf: (executionArn) => [{ at: `2026-11-30T00:00:0${run.executions.indexOf(executionArn)}.000Z`, execution: executionArn.split(':').pop()!, type: 'ExecutionStarted' }],
    statusOf: (executionArn) => statuses[executionArn],
  };

  it('names how each execution got the run, why, and what it is for the run; links each where a link is given', async () => {
    const links = await executionLinks(run, history, (executionArn) => `https://console.example/${executionArn}`);
    expect(links.map(({ name, via, role, status }) => ({ name, via, role, status }))).toEqual([
      { name: 'r1', via: 'start', role: 'handed off', status: 'SUCCEEDED' },
      { name: 'r1-c1', via: 'handoff', role: 'superseded', status: 'FAILED' },
      { name: 'r1-recovery-1', via: 'recovery', role: 'superseded', status: 'FAILED' },
      { name: 'r1-lzx1', via: 'resume', role: 'handed off', status: 'SUCCEEDED' },
      { name: 'r1-c4', via: 'handoff', role: 'driving', status: 'RUNNING' },
    ]);
    expect(links.map((link) => link.reason)).toEqual([
      'started by alice',
      'continue-as-new: r1 reached the history threshold (20,000 events)',
      'automatic recovery 1: execution r1-c1 FAILED: Agent.Transient',
      'resumed (savepoint resume or the console)',
      'continue-as-new: r1-lzx1 reached the history threshold (20,000 events)',
    ]);
    expect(links[0]).toMatchObject({ index: 0, startedAt: '2026-11-30T00:00:00.000Z', link: `https://console.example/${first}` });
    // A finished run: its last execution carries the run's end.
    expect((await executionLinks({ ...run, status: 'succeeded' }, history)).at(-1)).toMatchObject({ role: 'succeeded' });
    expect((await executionLinks(run, history))[0]!.link).toBeUndefined();
  });
});

describe('execution histories from the Step Functions API', () => {
  /** A fake Step Functions API holding one execution's events; counts the GetExecutionHistory calls. */
  function fakeSfn(events: HistoryEvent[]) {
    const calls: { reverseOrder?: boolean; nextToken?: string }[] = [];
    return {
      calls,
      events,
      send: async (command: { input: { executionArn: string; reverseOrder?: boolean; maxResults?: number; nextToken?: string } }) => {
        const { executionArn, reverseOrder, maxResults = 1000, nextToken } = command.input;
        calls.push({ ...(reverseOrder !== undefined && { reverseOrder }), ...(nextToken && { nextToken }) });
        if (!executionArn.endsWith(':e1')) throw Object.assign(new Error('Execution Does Not Exist'), { name: 'ExecutionDoesNotExist' });
        const ordered = reverseOrder ? [...events].reverse() : events;
        const start = Number(nextToken ?? 0);
        const page = ordered.slice(start, start + maxResults);
        return { events: page, ...(start + maxResults < ordered.length && { nextToken: String(start + maxResults) }) };
      },
    };
  }
  let id = 0;
  const event = (type: string, extra: Partial<HistoryEvent> = {}): HistoryEvent => ({ id: ++id, timestamp: new Date(Date.UTC(2026, 10, 30, 0, 0, 0, id)), type: type as HistoryEvent['type'], ...extra });
  const entered = (name: string) => event('TaskStateEntered', { stateEnteredEventDetails: { name } });

  it('pages through a long history once, then reads a running execution newest-first down to what it has', async () => {
    id = 0;
    const events = [event('ExecutionStarted')];
    for (let i = 0; i < 1200; i++) events.push(entered('CallTool'), event('TaskScheduled'), event('TaskSucceeded'));
    const sfn = fakeSfn(events);
    let clock = 0;
    const source = sfnHistorySource(sfn as never, { freshMs: 1_000, now: () => clock });
    const lines: HistoryLine[] = await source.linesOf(arn('e1'));
    expect(lines).toHaveLength(1 + 3600);
    expect(sfn.calls).toHaveLength(4); // 3,601 events, 1,000 a page
    expect(sfn.calls.every((call) => call.reverseOrder)).toBe(true);
    expect(await source.statusOf!(arn('e1'))).toBe('RUNNING');
    expect(sfn.calls).toHaveLength(4); // fresh: not asked again

    // Two new events, looked at after the freshness window: one call, which stops at the newest event known.
    events.push(entered('CallModel'), event('TaskScheduled'));
    clock = 1_000;
    const [again, twice] = await Promise.all([source.linesOf(arn('e1')), source.linesOf(arn('e1'))]);
    expect(sfn.calls).toHaveLength(5); // concurrent asks share one read
    expect(again).toBe(twice);
    expect(again.slice(-2)).toEqual([
      { at: expect.any(String), execution: 'e1', state: 'CallModel', type: 'StateEntered' },
      { at: expect.any(String), execution: 'e1', state: 'CallModel', type: 'TaskScheduled' },
    ]);

    // Finished: read once more, then never again.
    events.push(event('ExecutionSucceeded'));
    clock = 2_000;
    expect(await source.statusOf!(arn('e1'))).toBe('SUCCEEDED');
    clock = 10_000;
    await source.linesOf(arn('e1'));
    expect(sfn.calls).toHaveLength(6);
  });

  it('reads again, within the freshness window, what it read while the run ran once the asker says the run has ended', async () => {
    id = 0;
    const events = [event('ExecutionStarted'), entered('CallModel')];
    const sfn = fakeSfn(events);
    // The clock stands still: every ask below falls within the freshness window.
    const source = sfnHistorySource(sfn as never, { freshMs: 1_000, now: () => 0 });
    expect(await source.statusOf!(arn('e1'))).toBe('RUNNING');
    expect(sfn.calls).toHaveLength(1);

    // The run hands off and ends within the window: asked as before, the copy read while it ran.
    events.push(entered('Handoff'), event('ExecutionSucceeded'));
    expect((await source.linesOf(arn('e1'))).map((line) => line.state ?? line.type)).toEqual(['ExecutionStarted', 'CallModel']);
    expect(sfn.calls).toHaveLength(1);
    // Asked for a run that has ended: read again, down to the newest event it had (one call).
    const [lines, status] = await Promise.all([source.linesOf(arn('e1'), { runEnded: true }), source.statusOf!(arn('e1'), { runEnded: true })]);
    expect(lines.map((line) => line.state ?? line.type)).toEqual(['ExecutionStarted', 'CallModel', 'Handoff', 'ExecutionSucceeded']);
    expect(status).toBe('SUCCEEDED');
    expect(sfn.calls).toHaveLength(2);
    // Finished now: never read again, however it is asked.
    await source.linesOf(arn('e1'), { runEnded: true });
    expect(sfn.calls).toHaveLength(2);
  });

  it('reads an execution that does not exist (a successor not started yet) as empty', async () => {
    const source = sfnHistorySource(fakeSfn([]) as never);
    expect(await source.linesOf(arn('c1'))).toEqual([]);
    expect(await source.statusOf!(arn('c1'))).toBeUndefined();
  });
});
