import { describe, expect, it } from 'vitest';
import type { AslDefinition } from '../../local/template/asl.js';
import { LocalEngine } from '../../local/engine/local-engine.js';
import { manualClock } from '../support/manual-clock.js';

const definition: AslDefinition = {
  StartAt: 'Wait for it',
  States: {
    'Wait for it': {
      Type: 'Task',
      Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
      Parameters: { FunctionName: 'fn', Payload: { 'token.$': '$$.Task.Token' } },
      TimeoutSeconds: 1,
      Catch: [{ ErrorEquals: ['States.TaskFailed'], Next: 'Wrong' }],
      End: true,
    },
    Wrong: { Type: 'Fail', Error: 'CaughtByTaskFailed' },
  },
};

/** Resolves once the execution has recorded an event of `type` (the engine's own history events, no polling). */
function recorded(engine: LocalEngine, type: string): Promise<void> {
  return new Promise((resolve) => {
    const off = engine.on((event) => {
      if (event.type === type) off(), resolve();
    });
  });
}

// Time skipping: the engine's clock and its task timers are the test's, moved by hand; its own
// yields (setImmediate) and promises stay real. Nothing here waits in real time.
describe('task timeouts', () => {

  it('records TaskTimedOut, fails with States.Timeout (not matched by States.TaskFailed), and expires the token', async () => {
  let token = '';
  const clock = manualClock();
  const engine = new LocalEngine({
    now: clock.now,
    timers: clock,
    definition,
    stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:t',
    tasks: { 'Wait for it': { waitForTaskToken: true, invoke: async (p) => void (token = (p as { token: string }).token) } },
  });
  const submitted = recorded(engine, 'TaskSubmitted');
  const { executionArn } = engine.startExecution({});
  await submitted;
  clock.advance(999);
  expect(engine.describeExecution(executionArn).status).toBe('RUNNING');
  clock.advance(1);
  const done = await engine.waitForExecution(executionArn);
  expect(done).toMatchObject({ status: 'FAILED', error: 'States.Timeout' });
  const types = engine.getExecutionHistory(executionArn).map((e) => e.type);
  expect(types).toEqual(['ExecutionStarted', 'TaskStateEntered', 'TaskScheduled', 'TaskStarted', 'TaskSubmitted', 'TaskTimedOut', 'ExecutionFailed']);
  expect(() => engine.sendTaskSuccess(token, '{}')).toThrow(expect.objectContaining({ name: 'TaskTimedOut' }));
  await engine.close();
});

  it('fails a waiting task with States.HeartbeatTimeout once heartbeats stop', async () => {
  let token = '';
  const clock = manualClock();
  const engine = new LocalEngine({
    now: clock.now,
    timers: clock,
    definition: {
      StartAt: 'Beat',
      States: {
        Beat: {
          Type: 'Task',
          Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
          Parameters: { FunctionName: 'fn', Payload: { 'token.$': '$$.Task.Token' } },
          TimeoutSeconds: 10,
          HeartbeatSeconds: 1,
          Catch: [{ ErrorEquals: ['States.HeartbeatTimeout'], ResultPath: '$.missed', Next: 'Missed' }],
          End: true,
        },
        Missed: { Type: 'Pass', End: true },
      },
    },
    stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:hb',
    tasks: { Beat: { waitForTaskToken: true, invoke: async (p) => void (token = (p as { token: string }).token) } },
  });
  const submitted = recorded(engine, 'TaskSubmitted');
  const { executionArn } = engine.startExecution({});
  await submitted;
  clock.advance(600);
  engine.sendTaskHeartbeat(token); // pushes the deadline to 1.6 s
  clock.advance(999);
  expect(engine.getExecutionHistory(executionArn).map((e) => e.type)).not.toContain('TaskTimedOut');
  clock.advance(1);
  const done = await engine.waitForExecution(executionArn);
  expect(JSON.parse(done.output!).missed.Error).toBe('States.HeartbeatTimeout');
  const timedOut = engine.getExecutionHistory(executionArn).find((e) => e.type === 'TaskTimedOut');
  expect(timedOut?.taskTimedOutEventDetails?.error).toBe('States.HeartbeatTimeout');
  expect(timedOut!.timestamp.getTime() - engine.describeExecution(executionArn).startDate.getTime()).toBe(1600);
  expect(() => engine.sendTaskHeartbeat(token)).toThrow(expect.objectContaining({ name: 'TaskTimedOut' }));
  await engine.close();
});
});

// A Task whose TimeoutSeconds is below its function's timeout (so the Task's fires first): the
// engine aborts the invocation and retries only once that attempt has ended.
describe('a Lambda Task timing out while its invocation runs', () => {
  it('aborts the invocation with States.Timeout and retries only once the aborted attempt has ended', async () => {
    const clock = manualClock();
    const timeline: string[] = [];
    let reason: unknown;
    let started!: () => void;
    const firstStarted = new Promise<void>((resolve) => (started = resolve));
    let attempt = 0;
    const engine = new LocalEngine({
      now: clock.now,
      timers: clock,
      definition: {
        StartAt: 'Call',
        States: {
          Call: {
            Type: 'Task',
            Resource: 'arn:aws:states:::lambda:invoke',
            Parameters: { FunctionName: 'fn', Payload: {} },
            TimeoutSeconds: 1,
            Retry: [{ ErrorEquals: ['States.Timeout'], MaxAttempts: 1 }],
            End: true,
          },
        },
      },
      stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:t',
      retryIntervalOverrides: { Call: [0] },
      tasks: {
        Call: {
          waitForTaskToken: false,
          invoke: async (_payload, signal) => {
            const n = ++attempt;
            timeline.push(`attempt ${n} started`);
            try {
              if (n > 1) return { ok: true };
              started();
              await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
              reason = signal.reason;
              // Winding down takes more turns of the event loop than the retry would need to start.
              for (let turn = 0; turn < 50; turn++) await new Promise((resolve) => setImmediate(resolve));
              throw new Error('aborted');
            } finally {
              timeline.push(`attempt ${n} ended`);
            }
          },
        },
      },
    });
    engine.on((event) => {
      if (/^Task(Scheduled|TimedOut|Failed|Succeeded)$/.test(event.type)) timeline.push(event.type);
    });
    const { executionArn } = engine.startExecution({});
    await firstStarted;
    clock.advance(999);
    expect(reason).toBeUndefined();
    clock.advance(1);
    const done = await engine.waitForExecution(executionArn);

    expect(done).toMatchObject({ status: 'SUCCEEDED' });
    expect(reason).toMatchObject({ name: 'States.Timeout', message: 'Task Call timed out' });
    expect(timeline).toEqual(['TaskScheduled', 'attempt 1 started', 'TaskTimedOut', 'attempt 1 ended', 'TaskScheduled', 'attempt 2 started', 'attempt 2 ended', 'TaskSucceeded']);
    await engine.close();
  });
});
