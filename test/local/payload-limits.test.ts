/**
 * The 256 KiB payload quota where Step Functions applies it: it "affects tasks (activity, Lambda
 * function, or integrated service), state or execution output, and input data when scheduling a
 * task, entering a state, or starting an execution" (service quotas). A Lambda result over it
 * fails the execution even when the Task's ResultSelector would keep a few bytes of it.
 */
import { describe, expect, it } from 'vitest';
import type { AslDefinition } from '../../local/template/asl.js';
import { LocalEngine } from '../../local/engine/local-engine.js';
import { PAYLOAD_LIMIT_BYTES } from '../../lambdas/shared/limits.js';

const ARN = 'arn:aws:states:us-east-1:000000000000:stateMachine:limits';
const big = 'x'.repeat(PAYLOAD_LIMIT_BYTES / 2 + 1024);

function engineWith(definition: AslDefinition, invoke: (payload: unknown) => Promise<unknown>): LocalEngine {
  return new LocalEngine({ definition, stateMachineArn: ARN, tasks: { Act: { waitForTaskToken: false, invoke } } });
}

const task = (parameters: Record<string, unknown>, extra: Record<string, unknown> = {}): AslDefinition => ({
  StartAt: 'Act',
  States: { Act: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: parameters, TimeoutSeconds: 10, End: true, ...extra } },
});

describe('payload limits', () => {
  it('fails the execution with States.DataLimitExceeded when a Lambda result is over 256 KiB, though ResultSelector keeps only a little of it', async () => {
    const engine = engineWith(task({ FunctionName: 'fn', Payload: {} }, { ResultSelector: { 'size.$': '$.StatusCode' } }), async () => ({ blob: big + big }));
    const { executionArn } = engine.startExecution({ name: 'big-result' });
    expect(await engine.waitForExecution(executionArn)).toMatchObject({ status: 'FAILED', error: 'States.DataLimitExceeded', cause: expect.stringContaining("'Act' returned a result") });
    await engine.close();
  });

  it('fails it when the input a Task is scheduled with is over 256 KiB', async () => {
    let invoked = false;
    const engine = engineWith(task({ FunctionName: 'fn', Payload: { 'a.$': '$.big', 'b.$': '$.big' } }), async () => (invoked = true));
    const { executionArn } = engine.startExecution({ name: 'big-input', input: { big } });
    expect(await engine.waitForExecution(executionArn)).toMatchObject({ status: 'FAILED', error: 'States.DataLimitExceeded' });
    expect(invoked).toBe(false);
    expect(engine.getExecutionHistory(executionArn).some((event) => event.type === 'TaskScheduled')).toBe(false);
    await engine.close();
  });

  it("reports the version Lambda ran, as the invoke's ExecutedVersion", async () => {
    const engine = engineWith(task({ FunctionName: 'arn:aws:lambda:us-east-1:000000000000:function:fn:3', Payload: {} }), async () => ({ ok: true }));
    const { executionArn } = engine.startExecution({ name: 'versioned' });
    const done = await engine.waitForExecution(executionArn);
    expect(JSON.parse(done.output!)).toMatchObject({ ExecutedVersion: '3', Payload: { ok: true } });
    await engine.close();
  });
});
