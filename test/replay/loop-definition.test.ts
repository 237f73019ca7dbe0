import { beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_TOOL_CONCURRENCY } from '../../lambdas/shared/steps.js';
import { LOOP_STATES } from '../../local/replay/loop.js';
import { extractStateMachine, type AslDefinition, type AslState, type CfnTemplateJson, type ExtractedStateMachine } from '../../local/template/asl.js';
import { cachedTemplate } from '../../local/template/cache.js';

/**
 * A replay walks the agent loop without the engine (local/replay/loop.ts): its table of Task
 * states, their retries and catches, the Map's concurrency and the order of the loop's Choice rules
 * are the synthesized definition's, or a replay would run the steps otherwise than a run does.
 */
describe("replay's agent loop against the synthesized definition", () => {
  let machine: ExtractedStateMachine;
  const states = new Map<string, AslState>();
  beforeAll(async () => {
    machine = extractStateMachine((await cachedTemplate('loop-definition')) as CfnTemplateJson);
    const walk = (definition: AslDefinition) => {
      for (const [name, state] of Object.entries(definition.States)) {
        states.set(name, state);
        if (state.ItemProcessor) walk(state.ItemProcessor);
      }
    };
    walk(machine.definition);
  }, 120_000);

  it('knows every Task state of the definition, each on its step, with its Retry and Catch fields in order', () => {
    const tasks = [...states].filter(([, state]) => state.Type === 'Task').map(([name]) => name);
    expect(tasks.sort()).toEqual(Object.keys(LOOP_STATES).sort());
    for (const [name, expected] of Object.entries(LOOP_STATES)) {
      const state = states.get(name)!;
      expect(machine.tasks[name]?.step, `${name}'s step`).toBe(expected.step);
      const retry = ((state['Retry'] ?? []) as { ErrorEquals: string[]; MaxAttempts?: number }[]).map((field) => ({ errors: field.ErrorEquals, maxAttempts: field.MaxAttempts ?? 3 }));
      expect(retry, `${name}'s Retry`).toEqual(expected.retry);
      const caught = ((state['Catch'] ?? []) as { ErrorEquals: string[]; Next: string }[]).map((field) => ({ errors: field.ErrorEquals, next: field.Next }));
      expect(caught, `${name}'s Catch`).toEqual(expected.catch);
    }
  });

  it("runs a turn's tool calls as the Map does: as many at once, its failure recorded", () => {
    const map = states.get('ToolCalls')!;
    expect(map['MaxConcurrency']).toBe(DEFAULT_TOOL_CONCURRENCY);
    expect(map.ItemProcessor?.StartAt).toBe('CallTool');
    expect(map['Catch']).toMatchObject([{ ErrorEquals: ['States.ALL'], Next: 'RecordFailure' }]);
    expect(map['Next']).toBe('CallModel');
  });

  it('takes the loop\'s Choice rules in the order the definition tries them', () => {
    // loop.ts `execution`: extension, stop, hand-off, compaction, pending calls, else the turn's
    // tool calls (CallModel made the turn).
    const choice = states.get('ToolCallsOrStop') as unknown as { Choices: Record<string, unknown>[]; Default: string };
    expect(choice.Choices.map((rule) => rule['Next'])).toEqual(['RequestBudgetExtension', 'Finalize', 'Handoff', 'Compact', 'ResumeToolCalls']);
    expect(choice.Choices.map((rule) => JSON.stringify(rule))).toEqual([
      expect.stringContaining('"Variable":"$.budget.result.extension","IsPresent":true'),
      expect.stringContaining('"Variable":"$.budget.result.continue","BooleanEquals":false'),
      expect.stringContaining('"Variable":"$.budget.result.handoff","IsPresent":true'),
      expect.stringContaining('"Variable":"$.budget.result.compact","IsPresent":true'),
      expect.stringContaining('"Not":{"Variable":"$.budget.result.pending","IsNull":true}'),
    ]);
    expect(choice.Default).toBe('ToolCalls');
    // CallModel makes an execution's first decision too (loop.ts starts there).
    expect(states.get('StartOrResume')).toMatchObject({ Default: 'NothingToDo', Choices: [{ Next: 'CallModel' }] });
    expect(states.has('BudgetCheck')).toBe(false);
    expect(states.get('CallModel')?.['Next']).toBe('ToolCallsOrStop');
    expect(states.get('ResumeToolCalls')?.['Next']).toBe('ToolCalls');
    for (const [state, next] of [['RequestApproval', 'CallTool'], ['AwaitChildRun', 'CallTool'], ['RequestBudgetExtension', 'CallModel'], ['Compact', 'CallModel']]) expect(states.get(state!)?.['Next'], state).toBe(next);
  });
});
