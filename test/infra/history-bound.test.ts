import { beforeAll, describe, expect, it } from 'vitest';
import { RECORDED_ERRORS, UNRECORDED_RETRIES, recordedEvents } from '../../lambdas/guards/history.js';
import { ErrorNames } from '../../lambdas/shared/errors.js';
import { exampleTemplate } from './example-template.js';

/**
 * The handoff's history bound (lambdas/guards/history.ts) assumes the definition's Retry and Catch
 * fields: read back here from the synthesized definition, so that a changed retrier or a new loop
 * fails this test instead of silently making the bound too small.
 */
type Retrier = { ErrorEquals: string[]; MaxAttempts?: number };
type State = { Type: string; Resource?: string; Retry?: Retrier[]; Catch?: { ErrorEquals: string[]; Next: string }[]; ItemProcessor?: { States: Record<string, State> } };

let states: Record<string, State>;
beforeAll(() => {
  const [machine] = Object.values(exampleTemplate().findResources('AWS::StepFunctions::StateMachine'));
  const parts = (machine!.Properties.DefinitionString as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1];
  const top = JSON.parse(parts.map((part) => (typeof part === 'string' ? part : 'REF')).join('')).States as Record<string, State>;
  states = { ...top, ...top['ToolCalls']?.ItemProcessor?.States };
});

const recorded = new Set<string>(RECORDED_ERRORS);
/** The retries a Task may make that no step records: its retriers' MaxAttempts (3 when unset, as ASL says), the recorded errors' left out. */
const unrecordedRetries = (state: State) =>
  (state.Retry ?? []).filter((retrier) => !retrier.ErrorEquals.every((name) => recorded.has(name))).reduce((sum, retrier) => sum + (retrier.MaxAttempts ?? 3), 0);

describe('the definition the history bound assumes', () => {
  it('retries each Lambda Task at most 16 times for errors no step records, each task-token wait 14', () => {
    const tasks = Object.entries(states).filter(([, state]) => state.Type === 'Task');
    expect(tasks.length).toBeGreaterThan(5);
    for (const [name, state] of tasks) {
      const token = state.Resource!.endsWith('.waitForTaskToken');
      const allowed = token ? UNRECORDED_RETRIES.lambda + UNRECORDED_RETRIES.transient : UNRECORDED_RETRIES.lambda + UNRECORDED_RETRIES.timeout + UNRECORDED_RETRIES.transient;
      expect({ name, retries: unrecordedRetries(state) }).toEqual({ name, retries: allowed });
      // A retrier mixing recorded and unrecorded errors would be counted whole above, but its recorded errors twice: none does.
      for (const retrier of state.Retry ?? []) expect(retrier.ErrorEquals.some((error) => recorded.has(error)) && !retrier.ErrorEquals.every((error) => recorded.has(error))).toBe(false);
    }
  });

  it('loops back (a Catch that does not end the run) only on errors the steps record, each with the events the loop makes', () => {
    const ending = new Set(['RecordFailure', 'RunFailed', 'RunNotStarted', 'HandoffFailed']);
    const loops = Object.values(states).flatMap((state) => (state.Catch ?? []).filter((c) => !ending.has(c.Next)).flatMap((c) => c.ErrorEquals));
    // The approval wait's own Catch (rejected, expired, timed out) goes on to CallTool: one entry the ApprovalNeeded record already counts.
    const approvalOutcomes = new Set([ErrorNames.ApprovalRejected, ErrorNames.ApprovalExpired, 'States.Timeout']);
    expect(new Set(loops.filter((error) => !approvalOutcomes.has(error)))).toEqual(new Set([ErrorNames.ModelRetryAfter, ErrorNames.SettleWait, ErrorNames.ApprovalNeeded, ErrorNames.ChildRunPending]));
    // Each loop is three Pass/Wait states (or the approval wait) and the Task entered again.
    expect(states['ReadRetryAfter']?.Type).toBe('Pass');
    expect(recordedEvents(ErrorNames.ModelRetryAfter)).toBe(3 * 2 + 53);
  });
});
