import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PAYLOAD_LIMIT_BYTES, TASK_TOKEN_MAX_LENGTH } from '../../lambdas/shared/limits.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { fixtureEngine, synthFixture } from './fixture.js';

/**
 * What the Step Functions API refuses at its edges, as AWS refuses it (local/aws/sfn-start-execution.ts,
 * local/aws/sfn-task-tokens.ts): each refusal with the service's error code, each limit taken at
 * its value and refused one past it, and a refused call changes nothing.
 */
let template: CfnTemplateJson;
let fx: ReturnType<typeof fixtureEngine>;

beforeAll(() => {
  template = synthFixture();
});
beforeEach(() => {
  fx = fixtureEngine(template);
});
afterEach(async () => {
  await fx.engine.close();
});

const refusal = (call: () => unknown): string => {
  try {
    call();
    return 'no error';
  } catch (error) {
    return (error as Error).name;
  }
};

/** An execution input whose JSON text is `bytes` long in UTF-8, padded with `unit` (1 or 2 bytes each). */
function inputOf(bytes: number, unit: 'x' | 'é' = 'x'): Record<string, unknown> {
  const base = Buffer.byteLength(JSON.stringify({ id: 'pad', count: 3, pad: '' }));
  const size = Buffer.byteLength(unit);
  expect((bytes - base) % size).toBe(0);
  const input = { id: 'pad', count: 3, pad: unit.repeat((bytes - base) / size) };
  expect(Buffer.byteLength(JSON.stringify(input))).toBe(bytes);
  return input;
}

describe('StartExecution', () => {
  it('refuses a name AWS refuses with InvalidName, and starts one of 80 characters', () => {
    const start = (name: string) => () => fx.engine.startExecution({ name, input: { id: 'name', count: 3 } });
    for (const name of ['', 'x'.repeat(81), 'a b', 'tab\there', 'a/b', 'a:b', 'a*b', 'a?b', 'a{b}', 'a$b', 'a\u0001b']) expect(refusal(start(name)), JSON.stringify(name)).toBe('InvalidName');
    expect(fx.engine.listExecutions().executions).toEqual([]);
    expect(refusal(start('x'.repeat(80)))).toBe('no error');
  });

  it('refuses an input over 256 KiB in UTF-8 bytes with InvalidExecutionInput, and starts one of exactly 256 KiB', () => {
    expect(refusal(() => fx.engine.startExecution({ name: 'over', input: inputOf(PAYLOAD_LIMIT_BYTES + 1) }))).toBe('InvalidExecutionInput');
    // Fewer characters than the limit, more bytes: the quota is of bytes.
    const wide = inputOf(PAYLOAD_LIMIT_BYTES + 1, 'é');
    expect(JSON.stringify(wide).length).toBeLessThan(PAYLOAD_LIMIT_BYTES);
    expect(refusal(() => fx.engine.startExecution({ name: 'wide', input: wide }))).toBe('InvalidExecutionInput');
    expect(fx.engine.listExecutions().executions).toEqual([]);
    expect(refusal(() => fx.engine.startExecution({ name: 'at', input: inputOf(PAYLOAD_LIMIT_BYTES) }))).toBe('no error');
  });

  it('refuses an input that is not a JSON object with InvalidExecutionInput', () => {
    for (const input of ['[{"id":"list","count":3}]', '"text"', '42', 'null', '{"id": "cut'])
      expect(refusal(() => fx.engine.startExecution({ name: 'not-object', input })), input).toBe('InvalidExecutionInput');
    expect(fx.engine.listExecutions().executions).toEqual([]);
    expect(refusal(() => fx.engine.startExecution({ name: 'object', input: '{"id":"object","count":3}' }))).toBe('no error');
  });
});

describe('SendTaskSuccess', () => {
  it('refuses a token of no characters or over 2,048 with InvalidToken; an unknown one of 2,048 does not exist', () => {
    expect(refusal(() => fx.engine.sendTaskSuccess('', '{}'))).toBe('InvalidToken');
    expect(refusal(() => fx.engine.sendTaskHeartbeat('A'.repeat(TASK_TOKEN_MAX_LENGTH + 1)))).toBe('InvalidToken');
    expect(refusal(() => fx.engine.sendTaskFailure('A'.repeat(TASK_TOKEN_MAX_LENGTH + 1)))).toBe('InvalidToken');
    expect(refusal(() => fx.engine.sendTaskSuccess('A'.repeat(TASK_TOKEN_MAX_LENGTH), '{}'))).toBe('TaskDoesNotExist');
  });

  it('refuses an output over 256 KiB, or not JSON, with InvalidOutput, and the Task still waits for its callback', async () => {
    const { executionArn } = fx.engine.startExecution({ input: { id: 'output', count: 3 } });
    const { token } = await fx.nextApproval();
    const over = JSON.stringify({ pad: 'x'.repeat(PAYLOAD_LIMIT_BYTES) });
    expect(refusal(() => fx.engine.sendTaskSuccess(token, over))).toBe('InvalidOutput');
    expect(refusal(() => fx.engine.sendTaskSuccess(token, '{"approved": tru'))).toBe('InvalidOutput');
    expect(fx.engine.describeExecution(executionArn).status).toBe('RUNNING');
    fx.engine.sendTaskSuccess(token, '{"approved":true}');
    const done = await fx.engine.waitForExecution(executionArn);
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output!).approval).toEqual({ approved: true });
  });
});
