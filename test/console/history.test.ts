import { describe, expect, it } from 'vitest';
import { countStates, currentState, layoutDefinition, type HistoryLine } from '../../console/history.js';

const line = (state: string | undefined, type: string, error?: string): HistoryLine => ({ at: '2026-11-30T00:00:00.000Z', execution: 'e1', ...(state && { state }), type, ...(error && { error }) });

describe('per-state counts', () => {
  it('counts entries, retries and failures from the engine history (StateEntered lines)', () => {
    const lines = [
      line('CallModel', 'StateEntered'),
      line('CallModel', 'TaskScheduled'),
      line('CallModel', 'TaskFailed', 'Agent.ModelThrottled'),
      line('CallModel', 'TaskScheduled'),
      line('CallModel', 'TaskSucceeded'),
      line('CallTool', 'StateEntered'),
      line('CallTool', 'TaskScheduled'),
      line('CallTool', 'TaskSucceeded'),
      line('CallModel', 'StateEntered'),
      line('CallModel', 'TaskScheduled'),
      line('CallModel', 'TaskSucceeded'),
    ];
    expect(countStates([lines])).toEqual({
      CallModel: { entered: 2, retried: 1, failed: 1, errors: { 'Agent.ModelThrottled': 1 } },
      CallTool: { entered: 1, retried: 0, failed: 0, errors: {} },
    });
  });

  it('counts the same from the log of an earlier process (Task lines only)', () => {
    const lines = [
      line('CallModel', 'TaskScheduled'),
      line('CallModel', 'TaskFailed', 'Agent.Transient'),
      line('CallModel', 'TaskScheduled'),
      line('CallModel', 'TaskTimedOut', 'States.Timeout'),
      line('CallModel', 'TaskScheduled'),
      line('CallModel', 'TaskSucceeded'),
      line('CallModel', 'TaskScheduled'),
      line('CallModel', 'TaskSucceeded'),
    ];
    expect(countStates([lines])).toEqual({ CallModel: { entered: 2, retried: 2, failed: 2, errors: { 'Agent.Transient': 1, 'States.Timeout': 1 } } });
  });

  it('knows the current state of a running execution, and none of an ended one', () => {
    const running = [line(undefined, 'ExecutionStarted'), line('RequestApproval', 'StateEntered'), line('RequestApproval', 'TaskSubmitted')];
    expect(currentState(running)).toBe('RequestApproval');
    expect(currentState([...running, line(undefined, 'ExecutionSucceeded')])).toBeUndefined();
  });
});

describe('the graph', () => {
  it('puts states in rows from StartAt and keeps every transition, unreachable states last', () => {
    const graph = layoutDefinition({
      StartAt: 'A',
      States: {
        A: { Type: 'Task', Next: 'B', Catch: [{ ErrorEquals: ['States.ALL'], Next: 'F' }] },
        B: { Type: 'Choice', Choices: [{ Next: 'A' }], Default: 'C' },
        C: { Type: 'Succeed' },
        F: { Type: 'Fail' },
        Orphan: { Type: 'Pass', End: true },
      },
    });
    const y = Object.fromEntries(graph.nodes.map((node) => [node.name, node.y]));
    expect(y['A']).toBeLessThan(y['B']!);
    expect(y['B']).toBe(y['F']);
    expect(y['C']).toBeGreaterThan(y['B']!);
    expect(y['Orphan']).toBeGreaterThan(y['C']!);
    expect(graph.edges).toEqual([
      { from: 'A', to: 'B', kind: 'next' },
      { from: 'A', to: 'F', kind: 'catch' },
      { from: 'B', to: 'A', kind: 'choice' },
      { from: 'B', to: 'C', kind: 'default' },
    ]);
  });
});
