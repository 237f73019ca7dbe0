import { describe, expect, it } from 'vitest';
import type { AslDefinition } from '../../local/asl.js';
import { LocalEngine } from '../../local/engine.js';

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

describe.concurrent('task timeouts', () => {
  it('records TaskTimedOut, fails with States.Timeout (not matched by States.TaskFailed), and expires the token', async () => {
  let token = '';
  const engine = new LocalEngine({
    definition,
    stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:t',
    tasks: { 'Wait for it': { waitForTaskToken: true, invoke: async (p) => void (token = (p as { token: string }).token) } },
  });
  const { executionArn } = engine.startExecution({});
  const done = await engine.waitForExecution(executionArn);
  expect(done).toMatchObject({ status: 'FAILED', error: 'States.Timeout' });
  const types = engine.getExecutionHistory(executionArn).map((e) => e.type);
  expect(types).toEqual(['ExecutionStarted', 'TaskStateEntered', 'TaskScheduled', 'TaskStarted', 'TaskSubmitted', 'TaskTimedOut', 'ExecutionFailed']);
  expect(() => engine.sendTaskSuccess(token, '{}')).toThrow(expect.objectContaining({ name: 'TaskTimedOut' }));
  await engine.close();
});

  it('fails a waiting task with States.HeartbeatTimeout once heartbeats stop', async () => {
  let token = '';
  const engine = new LocalEngine({
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
  const { executionArn } = engine.startExecution({});
  await new Promise((resolve) => setTimeout(resolve, 600));
  engine.sendTaskHeartbeat(token); // pushes the deadline to ~1.6 s
  const done = await engine.waitForExecution(executionArn);
  expect(JSON.parse(done.output!).missed.Error).toBe('States.HeartbeatTimeout');
  const timedOut = engine.getExecutionHistory(executionArn).find((e) => e.type === 'TaskTimedOut');
  expect(timedOut?.taskTimedOutEventDetails?.error).toBe('States.HeartbeatTimeout');
  expect(timedOut!.timestamp.getTime() - engine.describeExecution(executionArn).startDate.getTime()).toBeGreaterThanOrEqual(1500);
  expect(() => engine.sendTaskHeartbeat(token)).toThrow(expect.objectContaining({ name: 'TaskTimedOut' }));
  await engine.close();
});
});
