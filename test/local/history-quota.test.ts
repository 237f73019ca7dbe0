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

/**
 * A Task first (five events: entered, scheduled, started, succeeded, exited), then the counter,
 * then a Fail state of the agent's own error: ExecutionStarted, 5, 4 × iterations, FailStateEntered,
 * then ExecutionFailed, which is event 4 × iterations + 8.
 */
const givingUp = (iterations: number): AslDefinition => ({
  StartAt: 'Begin',
  States: {
    Begin: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: 'arn:aws:lambda:us-east-1:000000000000:function:begin', 'Payload.$': '$' }, OutputPath: '$.Payload', Next: 'Count' },
    ...counter(iterations).States,
    Done: { Type: 'Fail', Error: 'Agent.GaveUp', Cause: 'counted enough' },
  },
});

async function run(iterations: number, definition: AslDefinition = counter(iterations)) {
  const begin = { waitForTaskToken: false, invoke: async (payload: unknown) => payload };
  const engine = new LocalEngine({ definition, stateMachineArn: ARN, tasks: definition.StartAt === 'Begin' ? { Begin: begin } : {} });
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

  it("fails an execution whose own failure would be event 25,000 with the quota's States.Runtime, not its own error", async () => {
    const { done, history } = await run(6_248, givingUp(6_248)); // 4 × 6,248 + 8 = 25,000: ExecutionFailed, but the quota's
    expect(history.at(-2)).toMatchObject({ id: 24_999, type: 'FailStateEntered' });
    expect(done).toMatchObject({ status: 'FAILED', error: 'States.Runtime', cause: 'The execution reached the maximum number of history events (25000).' });
    expect(history).toHaveLength(25_000);
    expect(history.at(-1)).toMatchObject({ id: 25_000, type: 'ExecutionFailed', executionFailedEventDetails: { error: 'States.Runtime' } });
  }, 120_000);

  it('lets the same execution end with its own error when ExecutionFailed is below the quota', async () => {
    const { done, history } = await run(6_247, givingUp(6_247));
    expect(done).toMatchObject({ status: 'FAILED', error: 'Agent.GaveUp', cause: 'counted enough' });
    expect(history).toHaveLength(24_996);
  }, 120_000);
});
