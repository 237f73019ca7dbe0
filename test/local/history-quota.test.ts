/**
 * The 25,000-event history quota of a Standard execution, where Step Functions applies it. AWS's
 * "Avoid reaching the history quota" (https://docs.aws.amazon.com/step-functions/latest/dg/bp-history-limit.html):
 * "When an execution reaches 24,999 events, it waits for the next event to happen. If the event
 * number 25,000 is ExecutionSucceeded, the execution finishes successfully. If the event number
 * 25,000 isn't ExecutionSucceeded, the ExecutionFailed event is logged and the state machine
 * execution fails because of reaching the history limit." The failure's error and cause are what
 * AWS reports for it: States.Runtime, "The execution reached the maximum number of history events
 * (25000)." (Service quotas: https://docs.aws.amazon.com/step-functions/latest/dg/service-quotas.html.)
 */
import { describe, expect, it } from 'vitest';
import type { AslDefinition } from '../../local/template/asl.js';
import { LocalEngine } from '../../local/engine/local-engine.js';

const ARN = 'arn:aws:states:us-east-1:000000000000:stateMachine:history-quota';

/**
 * Counts $.n up to `iterations`, then succeeds. The history: ExecutionStarted, four events per
 * iteration (Pass and Choice, each entered and exited), then Succeed entered and exited and
 * ExecutionSucceeded: 4 × iterations + 4 events.
 */
const counter = (iterations: number): AslDefinition => ({
  StartAt: 'Count',
  States: {
    Count: { Type: 'Pass', Parameters: { 'n.$': 'States.MathAdd($.n, 1)' }, Next: 'Enough' },
    Enough: { Type: 'Choice', Choices: [{ Variable: '$.n', NumericGreaterThanEquals: iterations, Next: 'Done' }], Default: 'Count' },
    Done: { Type: 'Succeed' },
  },
});

async function run(iterations: number) {
  const engine = new LocalEngine({ definition: counter(iterations), stateMachineArn: ARN, tasks: {} });
  try {
    const { executionArn } = engine.startExecution({ name: `count-${iterations}`, input: { n: 0 } });
    const done = await engine.waitForExecution(executionArn);
    return { done, history: engine.getExecutionHistory(executionArn) };
  } finally {
    await engine.close();
  }
}

describe('the 25,000-event history quota', () => {
  it('lets an execution whose event 25,000 is ExecutionSucceeded succeed', async () => {
    const { done, history } = await run(6_249); // 4 × 6,249 + 4 = 25,000 events
    expect(done.status).toBe('SUCCEEDED');
    expect(history).toHaveLength(25_000);
    expect(history.at(-1)).toMatchObject({ id: 25_000, type: 'ExecutionSucceeded' });
  }, 120_000);

  it('fails an execution whose event 25,000 would be anything else: ExecutionFailed is event 25,000, States.Runtime, as AWS reports it', async () => {
    const { done, history } = await run(6_250); // one iteration more: event 25,000 would be ChoiceStateEntered
    expect(done).toMatchObject({ status: 'FAILED', error: 'States.Runtime', cause: 'The execution reached the maximum number of history events (25000).' });
    expect(history).toHaveLength(25_000);
    expect(history.at(-2)).toMatchObject({ id: 24_999, type: 'PassStateExited' });
    expect(history.at(-1)).toMatchObject({
      id: 25_000,
      previousEventId: 24_999,
      type: 'ExecutionFailed',
      executionFailedEventDetails: { error: 'States.Runtime', cause: 'The execution reached the maximum number of history events (25000).' },
    });
  }, 120_000);
});
