import { createRequire } from 'node:module';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  DescribeExecutionCommand,
  DescribeStateMachineCommand,
  ListExecutionsCommand,
  SFNClient,
  SendTaskFailureCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  StopExecutionCommand,
  paginateGetExecutionHistory,
  type HistoryEvent as SdkHistoryEvent,
} from '@aws-sdk/client-sfn';
import type { AslDefinition, CfnTemplateJson } from '../../local/template/asl.js';
import { LocalEngine, summarizeHistory, type HistoryEvent } from '../../local/engine/local-engine.js';
import { startSfnEndpoint, type SfnEndpoint } from '../../local/services/step-functions.js';
import { fixtureEngine, synthFixture } from './fixture.js';

// asl-validator ships no type declarations.
const aslValidator = createRequire(import.meta.url)('asl-validator') as (definition: unknown) => { isValid: boolean; errorsText(sep?: string): string };

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

const entered = (events: HistoryEvent[]) => events.flatMap((e) => (e.stateEnteredEventDetails ? [e.stateEnteredEventDetails.name] : []));

/** The events between the n-th entry of a state and the next state entry. */
function visit(events: HistoryEvent[], state: string, n = 0): HistoryEvent[] {
  const starts = events.flatMap((e, i) => (e.stateEnteredEventDetails?.name === state ? [i] : []));
  const start = starts[n]!;
  const end = events.findIndex((e, i) => i > start && e.type.endsWith('StateEntered'));
  return events.slice(start, end < 0 ? undefined : end);
}

describe('extracted definition', () => {
  it('is valid ASL with every intrinsic resolved and every Task mapped to its step', () => {
    const { definition, tasks, stateMachineArn } = fx.extracted;
    const { isValid, errorsText } = aslValidator(definition);
    expect(isValid, errorsText('\n')).toBe(true);
    const text = JSON.stringify(definition);
    expect(text).not.toMatch(/Fn::|"Ref"/);
    expect(text).toContain('arn:aws:lambda:us-east-1:000000000000:function:StepA');
    expect(stateMachineArn).toMatch(/^arn:aws:states:us-east-1:000000000000:stateMachine:Machine/);
    expect(tasks).toEqual({
      Work: { step: 'a', functionLogicalId: expect.stringMatching(/^StepA/), waitForTaskToken: false },
      Approve: { step: 'b', functionLogicalId: expect.stringMatching(/^StepB/), waitForTaskToken: true, timeoutSeconds: 30 },
    });
    expect(definition.States.Work!.Retry).toContainEqual(expect.objectContaining({ ErrorEquals: ['Agent.Transient'], JitterStrategy: 'FULL' }));
  });
});

describe('LocalEngine', () => {
  it('loops, retries a transient failure, and resumes on SendTaskSuccess', async () => {
    const { engine, nextApproval } = fx;
    const seen: string[] = [];
    engine.on((e) => seen.push(e.type));
    const { executionArn } = engine.startExecution({ name: 'loop', input: { id: 'loop', count: 1, failTimes: 2 } });

    const approval = await nextApproval();
    expect(approval.count).toBe(3);
    expect(engine.describeExecution(executionArn).status).toBe('RUNNING');
    engine.sendTaskSuccess(approval.token, JSON.stringify({ approved: true }));

    const done = await engine.waitForExecution(executionArn);
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output!)).toEqual({ id: 'loop', count: 3, failTimes: 2, approval: { approved: true } });

    const history = engine.getExecutionHistory(executionArn);
    expect(entered(history)).toEqual(['Work', 'More?', 'Work', 'More?', 'Approve', 'Done']);
    expect(history.map((e) => e.id)).toEqual(history.map((_, i) => i + 1));
    expect(seen).toEqual(history.map((e) => e.type));

    const firstWork = visit(history, 'Work').map((e) => e.type);
    expect(firstWork.filter((t) => t === 'TaskScheduled')).toHaveLength(3);
    expect(firstWork.filter((t) => t === 'TaskFailed')).toHaveLength(2);
    expect(visit(history, 'Approve').map((e) => e.type)).toEqual([
      'TaskStateEntered',
      'TaskScheduled',
      'TaskStarted',
      'TaskSubmitted',
      'TaskSucceeded',
      'TaskStateExited',
    ]);
    const scheduled = history.find((e) => e.taskScheduledEventDetails?.resource === 'invoke.waitForTaskToken')!;
    expect(JSON.parse(scheduled.taskScheduledEventDetails!.parameters).Payload.taskToken).toBe(approval.token);
    expect(history.at(-1)!.type).toBe('ExecutionSucceeded');

    expect(summarizeHistory(history)).toEqual({
      Work: { entered: 2, invocations: 4, failures: 2, errors: { 'Agent.Transient': 2 } },
      'More?': { entered: 2, invocations: 0, failures: 0, errors: {} },
      Approve: { entered: 1, invocations: 1, failures: 0, errors: {} },
      Done: { entered: 1, invocations: 0, failures: 0, errors: {} },
    });
  });

  it('catches a non-retryable error with its Lambda-style Cause', async () => {
    const { executionArn } = fx.engine.startExecution({ input: { id: 'fatal', count: 0, fatal: true } });
    const done = await fx.engine.waitForExecution(executionArn);
    expect(done.status).toBe('SUCCEEDED');
    const { failure } = JSON.parse(done.output!) as { failure: { Error: string; Cause: string } };
    expect(failure.Error).toBe('Agent.Terminal');
    expect(JSON.parse(failure.Cause)).toMatchObject({ errorType: 'Agent.Terminal', errorMessage: 'card declined' });
    const history = fx.engine.getExecutionHistory(executionArn);
    expect(entered(history)).toEqual(['Work', 'HandleFailure']);
    expect(summarizeHistory(history).Work).toEqual({ entered: 1, invocations: 1, failures: 1, errors: { 'Agent.Terminal': 1 } });
  });

  it('fails the execution on an error that no Retry or Catch matches', async () => {
    const { executionArn } = fx.engine.startExecution({ input: { id: 'bad', count: 0, invalid: true } });
    const done = await fx.engine.waitForExecution(executionArn);
    expect(done).toMatchObject({ status: 'FAILED', error: 'Agent.InvalidInput' });
    const last = fx.engine.getExecutionHistory(executionArn, { reverseOrder: true })[0]!;
    expect(last.type).toBe('ExecutionFailed');
    expect(last.executionFailedEventDetails?.error).toBe('Agent.InvalidInput');
  });

  it('keeps a callback that arrives before the handler has returned', async () => {
    await fx.engine.close();
    fx = fixtureEngine(template, {
      b: async (payload) => {
        fx.engine.sendTaskSuccess((payload as { taskToken: string }).taskToken, '{"early":true}');
        return {};
      },
    });
    const { executionArn } = fx.engine.startExecution({ input: { id: 'early', count: 3 } });
    const done = await fx.engine.waitForExecution(executionArn);
    expect(JSON.parse(done.output!).approval).toEqual({ early: true });
  });

  it('validates inputs and tokens with the service error names', async () => {
    const { engine, nextApproval } = fx;
    expect(() => engine.startExecution({ input: '[1]' })).toThrow(expect.objectContaining({ name: 'InvalidExecutionInput' }));
    expect(() => engine.startExecution({ input: '{oops' })).toThrow(expect.objectContaining({ name: 'InvalidExecutionInput' }));
    expect(() => engine.describeExecution('arn:nope')).toThrow(expect.objectContaining({ name: 'ExecutionDoesNotExist' }));
    expect(() => engine.sendTaskSuccess('AQunknown', '{}')).toThrow(expect.objectContaining({ name: 'TaskDoesNotExist' }));

    const first = engine.startExecution({ name: 'same', input: { id: 'same', count: 3 } });
    // Same name and input while RUNNING is idempotent (STANDARD workflows); other input is a conflict.
    expect(engine.startExecution({ name: 'same', input: { id: 'same', count: 3 } }).executionArn).toBe(first.executionArn);
    expect(() => engine.startExecution({ name: 'same', input: { id: 'other', count: 3 } })).toThrow(
      expect.objectContaining({ name: 'ExecutionAlreadyExists' }),
    );

    const { token } = await nextApproval();
    expect(() => engine.sendTaskSuccess(token, 'not json')).toThrow(expect.objectContaining({ name: 'InvalidOutput' }));
    engine.sendTaskHeartbeat(token);
    engine.sendTaskSuccess(token, '{}');
    expect(() => engine.sendTaskSuccess(token, '{}')).toThrow(expect.objectContaining({ name: 'TaskDoesNotExist' }));
    await engine.waitForExecution(first.executionArn);
    expect(() => engine.startExecution({ name: 'same', input: { id: 'same', count: 3 } })).toThrow(
      expect.objectContaining({ name: 'ExecutionAlreadyExists' }),
    );
  });

  it('fails with States.DataLimitExceeded when a state output exceeds 256 KiB', async () => {
    await fx.engine.close();
    fx = fixtureEngine(template, { a: async () => ({ count: 5, blob: 'x'.repeat(300 * 1024) }) });
    const { executionArn } = fx.engine.startExecution({ input: { id: 'big', count: 0 } });
    const done = await fx.engine.waitForExecution(executionArn);
    expect(done).toMatchObject({ status: 'FAILED', error: 'States.DataLimitExceeded' });
    expect(entered(fx.engine.getExecutionHistory(executionArn))).toEqual(['Work']);
  });

  it('close() aborts an execution waiting for a token and rejects the token', async () => {
    const { executionArn } = fx.engine.startExecution({ input: { id: 'pending', count: 3 } });
    const { token } = await fx.nextApproval();
    await fx.engine.close();
    expect(fx.engine.describeExecution(executionArn)).toMatchObject({ status: 'ABORTED', error: 'LocalEngine.Closed' });
    expect(fx.engine.getExecutionHistory(executionArn).at(-1)!.type).toBe('ExecutionAborted');
    expect(() => fx.engine.sendTaskSuccess(token, '{}')).toThrow(expect.objectContaining({ name: 'TaskDoesNotExist' }));
  });
});

describe('ResultPath "$"', () => {
  const arn = 'arn:aws:states:us-east-1:000000000000:stateMachine:root';

  it('puts the result (or the caught error) in place of the whole input, as the default does on AWS', async () => {
    const definition: AslDefinition = {
      StartAt: 'Replace',
      States: {
        Replace: { Type: 'Pass', Parameters: { 'kept.$': '$.a' }, ResultPath: '$', Next: 'Fail' },
        Fail: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: 'f' }, Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$', Next: 'Done' }], End: true },
        Done: { Type: 'Pass', End: true },
      },
    };
    const invoke = async () => {
      throw Object.assign(new Error('no'), { name: 'Boom' });
    };
    const engine = new LocalEngine({ definition, stateMachineArn: arn, tasks: { Fail: { waitForTaskToken: false, invoke } } });
    try {
      const { executionArn } = engine.startExecution({ input: { a: 1, b: 2 } });
      const done = await engine.waitForExecution(executionArn);
      expect(done.status).toBe('SUCCEEDED');
      const history = engine.getExecutionHistory(executionArn);
      const exited = (name: string) => JSON.parse(history.find((event) => event.stateExitedEventDetails?.name === name)!.stateExitedEventDetails!.output!) as unknown;
      expect(exited('Replace')).toEqual({ kept: 1 });
      expect(JSON.parse(done.output!)).toMatchObject({ Error: 'Boom' });
      expect(Object.keys(JSON.parse(done.output!) as object).sort()).toEqual(['Cause', 'Error']);
    } finally {
      await engine.close();
    }
  });
});

describe('LocalEngine construction', () => {
  const arn = 'arn:aws:states:us-east-1:000000000000:stateMachine:guard';
  const invoke = async () => ({});

  it('refuses fields the interpreter would silently ignore, and mismatched task bindings', () => {
    const pass = (extra: object): AslDefinition => ({ StartAt: 'P', States: { P: { Type: 'Pass', End: true, ...extra } } });
    expect(() => new LocalEngine({ definition: pass({ Assign: { x: 1 } }), stateMachineArn: arn, tasks: {} })).toThrow(/State P uses Assign/);
    expect(() => new LocalEngine({ definition: { ...pass({}), QueryLanguage: 'JSONata' }, stateMachineArn: arn, tasks: {} })).toThrow(/JSONata/);
    expect(() => new LocalEngine({ definition: pass({}), stateMachineArn: arn, tasks: { Ghost: { waitForTaskToken: false, invoke } } })).toThrow(
      /Ghost matches no Task state/,
    );
    const { definition, stateMachineArn } = fx.extracted;
    expect(() => new LocalEngine({ definition, stateMachineArn, tasks: { Work: { waitForTaskToken: false, invoke } } })).toThrow(
      /No task binding for Task state Approve/,
    );
  });
});

describe('Step Functions endpoint with @aws-sdk/client-sfn', () => {
  let endpoint: SfnEndpoint;
  let sfn: SFNClient;

  beforeEach(async () => {
    endpoint = await startSfnEndpoint(fx.engine);
    sfn = new SFNClient({ endpoint: endpoint.url, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  });
  afterEach(async () => {
    sfn.destroy();
    await endpoint.close();
  });

  const start = (name: string, input: object) =>
    sfn.send(new StartExecutionCommand({ stateMachineArn: fx.extracted.stateMachineArn, name, input: JSON.stringify(input) }));
  const rejectionOf = (e: unknown) => (e as Error).name;

  it('resumes on SendTaskSuccess and refuses a reused token', async () => {
    const started = await start('sdk-ok', { id: 'sdk-ok', count: 2 });
    expect(started.startDate).toBeInstanceOf(Date);
    const { token } = await fx.nextApproval();
    await sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: JSON.stringify({ by: 'sdk' }) }));
    await fx.engine.waitForExecution(started.executionArn!);

    const described = await sfn.send(new DescribeExecutionCommand({ executionArn: started.executionArn }));
    expect(described.status).toBe('SUCCEEDED');
    expect(described.startDate).toBeInstanceOf(Date);
    expect(described.stopDate!.getTime()).toBeGreaterThanOrEqual(described.startDate!.getTime());
    expect(JSON.parse(described.output!).approval).toEqual({ by: 'sdk' });

    const reuse = await sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' })).catch(rejectionOf);
    expect(reuse).toBe('TaskDoesNotExist');
  });

  it('routes SendTaskFailure to the Catch on its error name', async () => {
    const started = await start('sdk-reject', { id: 'sdk-reject', count: 3 });
    const { token } = await fx.nextApproval();
    await sfn.send(new SendTaskFailureCommand({ taskToken: token, error: 'Approval.Rejected', cause: 'not today' }));
    const done = await fx.engine.waitForExecution(started.executionArn!);
    expect(done.status).toBe('SUCCEEDED');
    expect(JSON.parse(done.output!).rejection).toEqual({ Error: 'Approval.Rejected', Cause: 'not today' });
    const history = fx.engine.getExecutionHistory(started.executionArn!);
    expect(history.find((e) => e.type === 'TaskFailed')?.taskFailedEventDetails).toMatchObject({ error: 'Approval.Rejected', cause: 'not today' });
    expect(entered(history)).toEqual(['Work', 'More?', 'Approve', 'Rejected']);
  });

  it('stops, lists and pages the history of an execution', async () => {
    const started = await start('sdk-stop', { id: 'sdk-stop', count: 3 });
    const { token } = await fx.nextApproval();
    const stopped = await sfn.send(new StopExecutionCommand({ executionArn: started.executionArn, error: 'Ops.Cancel', cause: 'by hand' }));
    expect(stopped.stopDate).toBeInstanceOf(Date);

    const listed = await sfn.send(new ListExecutionsCommand({ stateMachineArn: fx.extracted.stateMachineArn, statusFilter: 'ABORTED' }));
    expect(listed.executions?.map((e) => e.name)).toEqual(['sdk-stop']);

    const events: SdkHistoryEvent[] = [];
    for await (const page of paginateGetExecutionHistory({ client: sfn, pageSize: 2 }, { executionArn: started.executionArn })) {
      events.push(...(page.events ?? []));
    }
    expect(events.map((e) => e.type)).toEqual(fx.engine.getExecutionHistory(started.executionArn!).map((e) => e.type));
    expect(events[0]!.timestamp).toBeInstanceOf(Date);
    expect(events.at(-1)).toMatchObject({ type: 'ExecutionAborted', executionAbortedEventDetails: { error: 'Ops.Cancel', cause: 'by hand' } });

    const late = await sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' })).catch(rejectionOf);
    expect(late).toBe('TaskDoesNotExist');
  });

  it('maps errors to AWS exception names', async () => {
    const arn = fx.extracted.stateMachineArn;
    const fail = (p: Promise<unknown>) => p.then(() => 'resolved', rejectionOf);
    expect(await fail(sfn.send(new DescribeExecutionCommand({ executionArn: `${arn}:missing` })))).toBe('ExecutionDoesNotExist');
    expect(await fail(sfn.send(new StartExecutionCommand({ stateMachineArn: arn, input: '"a string"' })))).toBe('InvalidExecutionInput');
    await start('twice', { id: 'twice', count: 3 });
    expect(await fail(start('twice', { id: 'different', count: 3 }))).toBe('ExecutionAlreadyExists');
    const { token } = await fx.nextApproval();
    expect(await fail(sfn.send(new SendTaskSuccessCommand({ taskToken: token, output: '{nope' })))).toBe('InvalidOutput');
    expect(await fail(sfn.send(new StartExecutionCommand({ stateMachineArn: `${arn}x` })))).toBe('StateMachineDoesNotExist');

    const sm = await sfn.send(new DescribeStateMachineCommand({ stateMachineArn: arn }));
    expect(JSON.parse(sm.definition!)).toEqual(fx.extracted.definition);
    expect(sm.creationDate).toBeInstanceOf(Date);

    const raw = async (target: string, body: unknown) => {
      const res = await fetch(endpoint.url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target },
        body: JSON.stringify(body),
      });
      return { status: res.status, body: (await res.json()) as { __type: string; message: string } };
    };
    const missing = await raw('AWSStepFunctions.SendTaskSuccess', { output: '{}' });
    expect(missing.status).toBe(400);
    expect(missing.body.__type).toBe('ValidationException');
    expect(missing.body.message).toContain('taskToken');
    expect((await raw('AWSStepFunctions.CreateActivity', {})).body.__type).toBe('UnknownOperationException');
  });

  it('refuses a client without its credential (any local user reaches loopback): no start, no stop', async () => {
    const started = await start('sdk-guarded', { id: 'sdk-guarded', count: 3 });
    await fx.nextApproval();
    const origin = new URL(endpoint.url).origin;
    const stranger = new SFNClient({ endpoint: origin, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
    try {
      const refused = (p: Promise<unknown>) => p.then(() => 'resolved', (e: Error) => e.name);
      expect(await refused(stranger.send(new StopExecutionCommand({ executionArn: started.executionArn })))).toBe('UnrecognizedClientException');
      expect(await refused(stranger.send(new StartExecutionCommand({ stateMachineArn: fx.extracted.stateMachineArn, name: 'intruder', input: '{"id":"x","count":1}' })))).toBe('UnrecognizedClientException');
    } finally {
      stranger.destroy();
    }
    expect((await sfn.send(new DescribeExecutionCommand({ executionArn: started.executionArn }))).status).toBe('RUNNING');
    expect((await sfn.send(new ListExecutionsCommand({ stateMachineArn: fx.extracted.stateMachineArn }))).executions?.map((e) => e.name)).not.toContain('intruder');
  });
});

describe('definitions the local interpreter would run differently from AWS', () => {
  it('refuses a Choice type test written with false, naming the state and the fix', () => {
    const definition = {
      StartAt: 'Pick',
      States: {
        Pick: { Type: 'Choice', Choices: [{ Variable: '$.x', IsNull: false, Next: 'Done' }], Default: 'Done' },
        Done: { Type: 'Succeed' },
      },
    };
    expect(() => new LocalEngine({ definition, stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:t', tasks: {} })).toThrow(
      /Choice state Pick tests IsNull: false: .* write Not\(\{ IsNull: true \}\) instead/,
    );
  });
});
