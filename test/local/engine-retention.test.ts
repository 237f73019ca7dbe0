import { describe, expect, it } from 'vitest';
import { LocalEngine } from '../../local/engine/local-engine.js';
import { manualClock } from '../support/manual-clock.js';

const arn = 'arn:aws:states:us-east-1:000000000000:stateMachine:retention';

describe('the local engine forgets old finished executions (issue 26, item 9)', () => {
  it('keeps the newest `retainFinished` finished executions, and forgets the older ones as AWS does after 90 days', async () => {
    const engine = new LocalEngine({ definition: { StartAt: 'P', States: { P: { Type: 'Pass', End: true } } }, stateMachineArn: arn, tasks: {}, retainFinished: 3 });
    const arns: string[] = [];
    for (let i = 1; i <= 5; i++) {
      const { executionArn } = engine.startExecution({ name: `e${i}`, input: { i } });
      await engine.waitForExecution(executionArn);
      arns.push(executionArn);
    }
    expect(engine.listExecutions().executions.map((e) => e.name)).toEqual(['e5', 'e4', 'e3']);
    expect(engine.getExecutionHistory(arns[2]!).at(-1)?.type).toBe('ExecutionSucceeded');
    expect(() => engine.describeExecution(arns[0]!)).toThrow(/Execution Does Not Exist/);
    // Its name is free again, as on AWS once a closed execution is gone.
    expect(engine.startExecution({ name: 'e1', input: {} }).executionArn).toBe(arns[0]);
    await engine.close();
  });

  it('never forgets a running execution', async () => {
    const engine = new LocalEngine({
      definition: { StartAt: 'W', States: { W: { Type: 'Wait', Seconds: 3600, End: true } } },
      stateMachineArn: arn,
      tasks: {},
      retainFinished: 1,
    });
    const running = engine.startExecution({ name: 'long', input: {} }).executionArn;
    for (const name of ['short-1', 'short-2']) {
      const { executionArn } = engine.startExecution({ name, input: {} });
      engine.stopExecution(executionArn);
      await engine.waitForExecution(executionArn);
    }
    expect(engine.listExecutions().executions.map((e) => [e.name, e.status])).toEqual([['short-2', 'ABORTED'], ['long', 'RUNNING']]);
    await engine.close();
  });

  it("forgets a timed-out task's token with its execution: a late callback is TaskTimedOut while the execution is kept, TaskDoesNotExist once it is forgotten", async () => {
    const tokens: string[] = [];
    const clock = manualClock(); // the Task timeouts, with no real wait
    const engine = new LocalEngine({
      now: clock.now,
      timers: clock,
      definition: {
        StartAt: 'Wait',
        States: { Wait: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken', Parameters: { FunctionName: 'fn', Payload: { 'token.$': '$$.Task.Token' } }, TimeoutSeconds: 1, End: true } },
      },
      stateMachineArn: arn,
      tasks: { Wait: { waitForTaskToken: true, invoke: async (p) => void tokens.push((p as { token: string }).token) } },
      retainFinished: 1,
    });
    const timeOut = async (name: string) => {
      const submitted = new Promise<void>((resolve) => {
        const off = engine.on((event) => event.type === 'TaskSubmitted' && (off(), resolve()));
      });
      const { executionArn } = engine.startExecution({ name, input: {} });
      await submitted;
      clock.advance(1_000);
      expect(await engine.waitForExecution(executionArn)).toMatchObject({ status: 'FAILED', error: 'States.Timeout' });
    };
    await timeOut('first');
    expect(() => engine.sendTaskSuccess(tokens[0]!, '{}')).toThrow(expect.objectContaining({ name: 'TaskTimedOut' }));
    await timeOut('second'); // 'first' is forgotten now (retainFinished: 1), and its token with it
    expect(() => engine.sendTaskSuccess(tokens[0]!, '{}')).toThrow(expect.objectContaining({ name: 'TaskDoesNotExist' }));
    expect(() => engine.sendTaskSuccess(tokens[1]!, '{}')).toThrow(expect.objectContaining({ name: 'TaskTimedOut' }));
    await engine.close();
  });
});
