import { describe, expect, it } from 'vitest';
import { assertSupported } from '../../local/engine/definition.js';
import { LocalEngine } from '../../local/engine/local-engine.js';
import type { AslDefinition, AslState } from '../../local/template/asl.js';

/**
 * A distributed Map in the twin (local/aws/sfn-distributed-map.ts): its child executions' events
 * are not the parent's history, it runs more than an inline Map's 40 at once (AWS: up to 10,000,
 * and 10,000 when it names no limit), and what the engine would run differently, or AWS refuses,
 * is refused with the field named.
 */
const ARN = 'arn:aws:states:us-east-1:000000000000:stateMachine:fanout';

function mapOver(mode: 'INLINE' | 'DISTRIBUTED', extra: Partial<AslState> = {}, processor: Record<string, unknown> = {}): AslDefinition {
  return {
    StartAt: 'Items',
    States: {
      Items: {
        Type: 'Map',
        ItemsPath: '$.items',
        ItemProcessor: {
          ProcessorConfig: mode === 'INLINE' ? { Mode: 'INLINE' } : { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD', ...processor },
          StartAt: 'Work',
          States: { Work: { Type: 'Task', Resource: 'arn:aws:states:::lambda:invoke', Parameters: { FunctionName: 'arn:aws:lambda:us-east-1:000000000000:function:work', 'Payload.$': '$' }, TimeoutSeconds: 60, OutputPath: '$.Payload', End: true } },
        },
        ...extra,
        End: true,
      },
    },
  };
}

/** A task handler that holds every call until `release`, counting the most in flight at once. */
function heldWork() {
  let inFlight = 0;
  let most = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const arrivals: (() => void)[] = [];
  return {
    binding: {
      waitForTaskToken: false,
      invoke: async (payload: unknown) => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        arrivals.splice(0).forEach((notify) => notify());
        await released;
        inFlight -= 1;
        return payload;
      },
    },
    release,
    most: () => most,
    /** Resolves once `count` calls are in flight at once. */
    inFlightReaches: async (count: number) => {
      while (inFlight < count) await new Promise<void>((resolve) => arrivals.push(resolve));
    },
  };
}

describe('a distributed Map in the local engine', () => {
  it.each([
    // It reads JSON and CSV objects (local/aws/sfn-item-reader.ts, test/engine/batch-manifest.test.ts), no other ItemReader.
    ['an ItemReader of JSON Lines', { ItemReader: { Resource: 'arn:aws:states:::s3:getObject', ReaderConfig: { InputType: 'JSONL' }, Parameters: { Bucket: 'b', Key: 'k' } } }, {}, /ItemReader\.ReaderConfig\.InputType JSONL \(the local engine reads JSON and CSV only\)/],
    ['an ItemReader listing a bucket', { ItemReader: { Resource: 'arn:aws:states:::s3:listObjectsV2', Parameters: { Bucket: 'b', Prefix: 'p' } } }, {}, /ItemReader\.Resource arn:aws:states:::s3:listObjectsV2 \(the local engine reads S3 objects with arn:aws:states:::s3:getObject only\)/],
    ['an ItemReader of one version of an object', { ItemReader: { Resource: 'arn:aws:states:::s3:getObject', ReaderConfig: { InputType: 'JSON' }, Parameters: { Bucket: 'b', Key: 'k', VersionId: 'v1' } } }, {}, /ItemReader\.Parameters\.VersionId \(the local S3 keeps one version of an object\)/],
    ['a CSV ItemReader with no header row', { ItemReader: { Resource: 'arn:aws:states:::s3:getObject', ReaderConfig: { InputType: 'CSV' }, Parameters: { Bucket: 'b', Key: 'k' } } }, {}, /ItemReader\.ReaderConfig\.CSVHeaderLocation undefined \(AWS requires FIRST_ROW or GIVEN for a CSV\)/],
    ['a failure tolerance read from a Path', { ToleratedFailureCountPath: '$.tolerated' }, {}, /ToleratedFailureCountPath \(not run by the local engine\)/],
    ['a ToleratedFailurePercentage over 100', { ToleratedFailurePercentage: 101 }, {}, /ToleratedFailurePercentage 101 \(AWS accepts a number from 0 to 100\)/],
    ['a failure tolerance beside a Retry', { ToleratedFailureCount: 1, Retry: [{ ErrorEquals: ['States.ALL'] }] }, {}, /Retry beside a failure tolerance/],
    ['a ResultWriter', { ResultWriter: { Resource: 'arn:aws:states:::s3:putObject', Parameters: { Bucket: 'b', Prefix: 'p' } } }, {}, /ResultWriter/],
    ['EXPRESS child executions', {}, { ExecutionType: 'EXPRESS' }, /ExecutionType EXPRESS \(the local engine runs STANDARD child executions only\)/],
    ['a MaxConcurrency over 10,000', { MaxConcurrency: 10_001 }, {}, /MaxConcurrency 10001 \(AWS accepts an integer from 0 to 10000 for a distributed Map\)/],
  ])('refuses %s, naming it', (_what, extra, processor, message) => {
    expect(() => assertSupported(mapOver('DISTRIBUTED', extra, processor))).toThrow(message);
  });

  it('runs a MaxConcurrency of 10,000 and an inline Map’s fields as before', () => {
    expect(() => assertSupported(mapOver('DISTRIBUTED', { MaxConcurrency: 10_000 }))).not.toThrow();
    expect(() => assertSupported(mapOver('DISTRIBUTED', { ToleratedFailureCount: 2, ToleratedFailurePercentage: 50 }))).not.toThrow();
    expect(() => assertSupported(mapOver('INLINE', { ToleratedFailurePercentage: 5 }))).toThrow(/ToleratedFailurePercentage, which the local engine does not support/);
  });

  it('keeps its child executions’ events out of the parent’s history, where an inline Map records them', async () => {
    const histories: Record<string, string[]> = {};
    for (const mode of ['INLINE', 'DISTRIBUTED'] as const) {
      const work = heldWork();
      work.release();
      const engine = new LocalEngine({ definition: mapOver(mode), stateMachineArn: ARN, tasks: { Work: work.binding } });
      const { executionArn } = engine.startExecution({ input: JSON.stringify({ items: [1, 2, 3] }) });
      expect((await engine.waitForExecution(executionArn)).output).toBe('[1,2,3]');
      histories[mode] = engine.getExecutionHistory(executionArn).map((event) => event.type);
      await engine.close();
    }
    expect(histories['INLINE']).toEqual(expect.arrayContaining(['MapIterationStarted', 'TaskStateEntered', 'TaskScheduled']));
    expect(histories['DISTRIBUTED']).toEqual(['ExecutionStarted', 'MapStateEntered', 'MapStateExited', 'ExecutionSucceeded']);
  });

  it('starts each child execution as the state machine role may: states:StartExecution on the state machine itself', async () => {
    const work = heldWork();
    work.release();
    const starts: string[] = [];
    const iam = { authorizeInvoke: () => undefined, authorizeStartExecution: (arn: string) => void starts.push(arn), decisions: () => ({ allowed: 0, denied: 0 }) };
    const engine = new LocalEngine({ definition: mapOver('DISTRIBUTED'), stateMachineArn: ARN, tasks: { Work: work.binding }, iam });
    const { executionArn } = engine.startExecution({ input: JSON.stringify({ items: [1, 2, 3] }) });
    expect((await engine.waitForExecution(executionArn)).output).toBe('[1,2,3]');
    // One start per child, on the unqualified ARN (AWS's example policy grants it there), and no event of the start in the parent's history.
    expect(starts).toEqual([ARN, ARN, ARN]);
    expect(engine.getExecutionHistory(executionArn).map((event) => event.type)).toEqual(['ExecutionStarted', 'MapStateEntered', 'MapStateExited', 'ExecutionSucceeded']);
    await engine.close();
  });

  it('fails the execution with States.Runtime, starting no child, when its role may not start them — a Catch on the Map does not turn it into a path', async () => {
    let invoked = 0;
    const refuse = () => {
      throw Object.assign(new Error('User: arn:aws:sts::000000000000:assumed-role/Role/session is not authorized to perform: states:StartExecution on resource: ' + ARN), { name: 'AccessDeniedException' });
    };
    const iam = { authorizeInvoke: () => undefined, authorizeStartExecution: refuse, decisions: () => ({ allowed: 0, denied: 1 }) };
    const caught = mapOver('DISTRIBUTED', { Catch: [{ ErrorEquals: ['States.ALL'], Next: 'Recovered' }], Next: 'Done' });
    delete caught.States['Items']!['End'];
    caught.States['Recovered'] = { Type: 'Pass', End: true };
    caught.States['Done'] = { Type: 'Pass', End: true };
    const engine = new LocalEngine({ definition: caught, stateMachineArn: ARN, tasks: { Work: { waitForTaskToken: false, invoke: async (payload: unknown) => ((invoked += 1), payload) } }, iam });
    const { executionArn } = engine.startExecution({ input: JSON.stringify({ items: [1, 2, 3] }) });
    const ended = await engine.waitForExecution(executionArn);
    expect(ended).toMatchObject({ status: 'FAILED', error: 'States.Runtime' });
    expect(ended.cause).toMatch(/The Map Items could not start a child execution: AccessDeniedException: .*not authorized to perform: states:StartExecution/);
    expect(invoked).toBe(0);
    await engine.close();
  });

  it('runs more than an inline Map’s 40 iterations at once when it names no limit', async () => {
    const work = heldWork();
    const engine = new LocalEngine({ definition: mapOver('DISTRIBUTED'), stateMachineArn: ARN, tasks: { Work: work.binding } });
    const { executionArn } = engine.startExecution({ input: JSON.stringify({ items: Array.from({ length: 60 }, (_, index) => ({ index })) }) });
    await work.inFlightReaches(60);
    work.release();
    expect((await engine.waitForExecution(executionArn)).status).toBe('SUCCEEDED');
    expect(work.most()).toBe(60);
    await engine.close();
  });

  it('runs at most its MaxConcurrencyPath’s iterations at once', async () => {
    const work = heldWork();
    const engine = new LocalEngine({ definition: mapOver('DISTRIBUTED', { MaxConcurrencyPath: '$.concurrency' }), stateMachineArn: ARN, tasks: { Work: work.binding } });
    const { executionArn } = engine.startExecution({ input: JSON.stringify({ concurrency: 7, items: Array.from({ length: 30 }, (_, index) => ({ index })) }) });
    await work.inFlightReaches(7);
    work.release();
    expect((await engine.waitForExecution(executionArn)).status).toBe('SUCCEEDED');
    expect(work.most()).toBe(7);
    await engine.close();
  });

  describe('fails its Map Run past the tolerated failure threshold, with States.ExceedToleratedFailureThreshold', () => {
    /** Work that fails the items that are odd numbers, with an error of its own, and returns the others. */
    const oddsFail = {
      waitForTaskToken: false,
      invoke: async (payload: unknown) => {
        if ((payload as number) % 2 === 1) throw Object.assign(new Error(`item ${String(payload)} broke`), { name: 'ItemBroke' });
        return payload;
      },
    };
    async function run(extra: Partial<AslState>, items: number[], caught = false) {
      const definition = mapOver('DISTRIBUTED', caught ? { ...extra, Catch: [{ ErrorEquals: ['States.ExceedToleratedFailureThreshold'], ResultPath: '$.failure', Next: 'Recovered' }], Next: 'Done' } : extra);
      if (caught) {
        delete definition.States['Items']!['End'];
        definition.States['Recovered'] = { Type: 'Pass', End: true };
        definition.States['Done'] = { Type: 'Pass', End: true };
      }
      const engine = new LocalEngine({ definition, stateMachineArn: ARN, tasks: { Work: oddsFail } });
      try {
        const { executionArn } = engine.startExecution({ input: JSON.stringify({ items }) });
        const ended = await engine.waitForExecution(executionArn);
        return { ended, states: engine.getExecutionHistory(executionArn).filter((event) => event.stateEnteredEventDetails).map((event) => event.stateEnteredEventDetails!.name) };
      } finally {
        await engine.close();
      }
    }

    it('by default (0%): one failed item fails the Map, not with the item’s own error', async () => {
      const { ended } = await run({}, [2, 4, 5, 6]);
      expect(ended).toMatchObject({ status: 'FAILED', error: 'States.ExceedToleratedFailureThreshold' });
      expect(ended.cause).toMatch(/The Map Run of Items failed: 1 of 4 items failed, over its tolerated failure threshold \(ToleratedFailurePercentage 0\).*ItemBroke/);
    });

    it('tolerates ToleratedFailureCount failed items, their places holding their error, and fails on one more', async () => {
      const { ended } = await run({ ToleratedFailureCount: 2 }, [1, 2, 3, 4]);
      expect(ended.status).toBe('SUCCEEDED');
      const output = JSON.parse(ended.output!) as unknown[];
      expect(output[1]).toBe(2);
      expect(output[0]).toMatchObject({ Error: expect.stringMatching(/ItemBroke/) as unknown });
      const over = await run({ ToleratedFailureCount: 2 }, [1, 2, 3, 5]);
      expect(over.ended).toMatchObject({ status: 'FAILED', error: 'States.ExceedToleratedFailureThreshold' });
      expect(over.ended.cause).toMatch(/3 of 4 items failed.*ToleratedFailureCount 2/);
    });

    it('tolerates up to ToleratedFailurePercentage of its items failing', async () => {
      expect((await run({ ToleratedFailurePercentage: 50 }, [1, 2, 3, 4])).ended.status).toBe('SUCCEEDED');
      expect((await run({ ToleratedFailurePercentage: 50 }, [1, 2, 3, 5])).ended).toMatchObject({ status: 'FAILED', error: 'States.ExceedToleratedFailureThreshold' });
    });

    it('is caught by a Catch on States.ExceedToleratedFailureThreshold, as AWS’s is', async () => {
      const { ended, states } = await run({}, [1, 2], true);
      expect(ended.status).toBe('SUCCEEDED');
      expect(states).toEqual(['Items', 'Recovered']);
      expect(JSON.parse(ended.output!)).toMatchObject({ items: [1, 2], failure: { Error: 'States.ExceedToleratedFailureThreshold' } });
    });
  });
});
