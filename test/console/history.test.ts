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

  it('is the approval a run waits for while the other tool calls of its turn go on beside it', () => {
    const waiting = [line('RequestApproval', 'StateEntered'), line('RequestApproval', 'TaskSubmitted'), line('CallTool', 'StateEntered'), line('CallTool', 'TaskSucceeded')];
    expect(currentState(waiting)).toBe('RequestApproval');
    expect(currentState([...waiting, line('RequestApproval', 'TaskSucceeded'), line('CallTool', 'StateEntered')])).toBe('CallTool');
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

  it("draws a Map's iteration states below the Map", () => {
    const graph = layoutDefinition({
      StartAt: 'M',
      States: {
        M: { Type: 'Map', Next: 'Z', ItemProcessor: { StartAt: 'I', States: { I: { Type: 'Task', End: true } } } },
        Z: { Type: 'Succeed' },
      },
    });
    expect(graph.nodes.map((node) => node.name).sort()).toEqual(['I', 'M', 'Z']);
    expect(graph.edges).toEqual(expect.arrayContaining([{ from: 'M', to: 'I', kind: 'next' }]));
    const y = Object.fromEntries(graph.nodes.map((node) => [node.name, node.y]));
    expect(y['I']).toBeGreaterThan(y['M']!);
  });
});
