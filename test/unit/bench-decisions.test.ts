import { describe, expect, it } from 'vitest';
import { decisionOnlyInvocations, stepExecutions } from '../../bench/pipeline.js';
import type { HistoryEvent } from '../../local/engine/local-engine.js';

/** A history as the engine writes it, from (type, state name, output) triples: ids in order, each event after the last (a TaskSucceeded's output is Lambda's). */
function history(events: [type: string, name?: string, output?: unknown][]): HistoryEvent[] {
  return events.map(([type, name, output], index) => ({
    id: index + 1,
    previousEventId: index,
    timestamp: new Date(0),
    type,
    ...(type.endsWith('StateEntered') && { stateEnteredEventDetails: { name: name!, input: '{}', inputDetails: { truncated: false } } }),
    ...(type.endsWith('StateExited') && { stateExitedEventDetails: { name: name!, output: JSON.stringify(output), outputDetails: { truncated: false } } }),
    ...(type === 'TaskSucceeded' && { taskSucceededEventDetails: { resource: 'invoke', resourceType: 'lambda', output: JSON.stringify(output), outputDetails: { truncated: false } } }),
  }));
}

const callModel = (result: object, attempts = 1): [string, string?, unknown?][] => [
  ['TaskStateEntered', 'CallModel'],
  ...Array.from({ length: attempts }, (_, attempt): [string, string?, unknown?][] => (attempt < attempts - 1 ? [['TaskScheduled'], ['TaskFailed']] : [['TaskScheduled'], ['TaskSucceeded', undefined, { Payload: result }]])).flat(),
  ['TaskStateExited', 'CallModel', { budget: { result } }],
];

describe("the waste benchmark's step executions", () => {
  it("leaves out CallModel's invocations that decided and called no model, every attempt of them, and only those", () => {
    const events = history([
      ['TaskStateEntered', 'BudgetCheck'],
      ['TaskScheduled'],
      ['TaskStateExited', 'BudgetCheck', { budget: { result: { continue: true } } }],
      // A model turn (its first attempt failed): two executions of a step.
      ...callModel({ continue: true, turn: 1, calls: [] }, 2),
      ['MapStateEntered', 'ToolCalls'],
      ['TaskStateEntered', 'CallTool'],
      ['TaskScheduled'],
      ['TaskStateExited', 'CallTool', {}],
      ['MapStateExited', 'ToolCalls', {}],
      // The run's closing decision, retried once: no step.
      ...callModel({ continue: false, status: 'succeeded' }, 2),
    ]);
    expect(decisionOnlyInvocations(events)).toBe(2);
    // CallModel 4 invocations, CallTool 1: 3 are the steps' (BudgetCheck's is no step either).
    expect(stepExecutions({ CallModel: { invocations: 4 }, CallTool: { invocations: 1 } }, decisionOnlyInvocations(events))).toBe(3);
  });

  it('counts a CallModel whose attempt was caught into another state (a retry-after wait) as a step', () => {
    const events = history([
      ['TaskStateEntered', 'CallModel'],
      ['TaskScheduled'],
      ['TaskFailed'],
      ['PassStateEntered', 'ReadRetryAfter'],
      ['PassStateExited', 'ReadRetryAfter', {}],
      ...callModel({ continue: true, turn: 2, calls: [] }),
    ]);
    expect(decisionOnlyInvocations(events)).toBe(0);
  });
});
