/**
 * The local engine runs an inline Map as Step Functions documents it ("Using Map state in Inline
 * mode"): iterations concurrently up to MaxConcurrency (never more than 40), a `.waitForTaskToken`
 * Task in several iterations at once, each with its own token, Retry inside an iteration, and a
 * failed iteration failing the Map — which stops the others — into the Map's Catch.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { AslDefinition } from '../../local/template/asl.js';
import { LocalEngine, type HistoryEvent } from '../../local/engine/local-engine.js';

const arn = 'arn:aws:states:us-east-1:000000000000:stateMachine:map';
const lambda = (name: string, token = false) => ({
  Type: 'Task',
  Resource: `arn:aws:states:::lambda:invoke${token ? '.waitForTaskToken' : ''}`,
  Parameters: { FunctionName: name, Payload: token ? { 'item.$': '$', 'taskToken.$': '$$.Task.Token' } : { 'item.$': '$' } },
  TimeoutSeconds: 60,
});

/** Items `{ id, wait }`: one that waits goes through Approve (a task token) before Work. */
function mapDefinition(maxConcurrency: number, extra: Record<string, unknown> = {}): AslDefinition {
  return {
    StartAt: 'Calls',
    States: {
      Calls: {
        Type: 'Map',
        ItemsPath: '$.items',
        ItemSelector: { 'id.$': '$$.Map.Item.Value.id', 'wait.$': '$$.Map.Item.Value.wait', 'index.$': '$$.Map.Item.Index' },
        MaxConcurrency: maxConcurrency,
        ItemProcessor: {
          StartAt: 'Wait?',
          States: {
            'Wait?': { Type: 'Choice', Choices: [{ Variable: '$.wait', BooleanEquals: true, Next: 'Approve' }], Default: 'Work' },
            Approve: { ...lambda('approve', true), ResultPath: '$.approval', Next: 'Work' },
            Work: { ...lambda('work'), Retry: [{ ErrorEquals: ['Agent.Transient'], MaxAttempts: 2, IntervalSeconds: 1 }], ResultSelector: { 'done.$': '$.Payload' }, End: true },
          },
        },
        Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Failed' }],
        ResultPath: '$.results',
        End: true,
        ...extra,
      },
      Failed: { Type: 'Pass', End: true },
    },
  };
}

function named(name: string, message: string): Error {
  return Object.assign(new Error(message), { name });
}

let engine: LocalEngine | undefined;
afterEach(async () => {
  await engine?.close();
  engine = undefined;
});

/** An engine whose Work step runs `work`, and whose Approve step hands its token to `tokens`. */
function start(definition: AslDefinition, work: (item: { id: string; index: number }) => Promise<unknown>) {
  const tokens = new Map<string, string>();
  const waiting: (() => void)[] = [];
  engine = new LocalEngine({
    definition,
    stateMachineArn: arn,
    retryIntervalOverrides: { Work: 0 },
    tasks: {
      Work: { waitForTaskToken: false, invoke: async (payload) => work((payload as { item: { id: string; index: number } }).item) },
      Approve: {
        waitForTaskToken: true,
        invoke: async (payload) => {
          const { item, taskToken } = payload as { item: { id: string }; taskToken: string };
          tokens.set(item.id, taskToken);
          for (const wake of waiting.splice(0)) wake();
          return {};
        },
      },
    },
  });
  const tokensFor = async (count: number) => {
    while (tokens.size < count) await new Promise<void>((resolve) => waiting.push(resolve));
    return tokens;
  };
  return { engine, tokens, tokensFor };
}

const enteredStates = (events: HistoryEvent[]) => events.flatMap((e) => (e.stateEnteredEventDetails ? [e.stateEnteredEventDetails.name] : []));

describe('an inline Map on the local engine', () => {
  it('runs iterations that wait on task tokens beside the others, each with its own token, results in item order', async () => {
    const items = [
      { id: 'a', wait: true },
      { id: 'b', wait: false },
      { id: 'c', wait: true },
      { id: 'd', wait: false },
    ];
    const worked: string[] = [];
    const { engine, tokensFor } = start(mapDefinition(10), async (item) => {
      worked.push(item.id);
      return `${item.id}@${item.index}`;
    });
    const { executionArn } = engine.startExecution({ input: { items } });
    const tokens = await tokensFor(2);
    // Both approvals wait at once, on two tokens; the calls that need none are done meanwhile.
    expect(new Set(tokens.values()).size).toBe(2);
    await vi_waitFor(() => worked.length === 2);
    expect(worked.sort()).toEqual(['b', 'd']);
    expect(engine.describeExecution(executionArn).status).toBe('RUNNING');
    // Decided in the other order than asked.
    engine.sendTaskSuccess(tokens.get('c')!, '{"approved":true}');
    engine.sendTaskSuccess(tokens.get('a')!, '{"approved":true}');
    const done = await engine.waitForExecution(executionArn);
    expect(done.status).toBe('SUCCEEDED');
    expect((JSON.parse(done.output!) as { results: { done: string }[] }).results.map((result) => result.done)).toEqual(['a@0', 'b@1', 'c@2', 'd@3']);
    const history = engine.getExecutionHistory(executionArn);
    expect(history.filter((e) => e.type === 'MapIterationStarted')).toHaveLength(4);
    expect(history.filter((e) => e.type === 'MapIterationSucceeded')).toHaveLength(4);
    expect(enteredStates(history).filter((name) => name === 'Approve')).toHaveLength(2);
  });

  it('retries inside an iteration, and a failed iteration fails the Map into its Catch, stopping the others', async () => {
    const attempts = new Map<string, number>();
    const { engine, tokens, tokensFor } = start(mapDefinition(10), async (item) => {
      const n = (attempts.get(item.id) ?? 0) + 1;
      attempts.set(item.id, n);
      if (item.id === 'flaky' && n === 1) throw named('Agent.Transient', 'once');
      if (item.id === 'broken') {
        await vi_waitFor(() => tokens.has('waiting')); // fails while the other iteration waits for its person
        throw named('Agent.Terminal', 'card declined');
      }
      return item.id;
    });
    const { executionArn } = engine.startExecution({ input: { items: [{ id: 'held', wait: true }, { id: 'flaky', wait: false }] } });
    const [token] = [...(await tokensFor(1)).values()];
    await vi_waitFor(() => attempts.get('flaky') === 2);
    engine.sendTaskSuccess(token!, '{}');
    expect((await engine.waitForExecution(executionArn)).status).toBe('SUCCEEDED');
    expect(attempts.get('flaky')).toBe(2);

    const failing = engine.startExecution({ input: { items: [{ id: 'waiting', wait: true }, { id: 'broken', wait: false }] } });
    const done = await engine.waitForExecution(failing.executionArn);
    expect(done.status).toBe('SUCCEEDED');
    const output = JSON.parse(done.output!) as { error: { Error: string }; results?: unknown };
    expect(output.error.Error).toBe('Agent.Terminal');
    expect(output.results).toBeUndefined();
    expect(enteredStates(engine.getExecutionHistory(failing.executionArn)).at(-1)).toBe('Failed');
    // The iteration still waiting was stopped with the Map: its token is no longer live.
    const waitingToken = tokens.get('waiting')!;
    expect(() => engine.sendTaskSuccess(waitingToken, '{}')).toThrow(/TaskDoesNotExist|does not exist/);
  });

  it.each([
    [2, 2],
    [100, 40],
  ])('runs at most MaxConcurrency %i iterations at once (%i: an inline Map runs at most 40)', async (maxConcurrency, most) => {
    let running = 0;
    let peak = 0;
    const release: (() => void)[] = [];
    const { engine } = start(mapDefinition(maxConcurrency), async (item) => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise<void>((resolve) => release.push(resolve));
      running -= 1;
      return item.id;
    });
    const items = Array.from({ length: 60 }, (_, i) => ({ id: `i${i}`, wait: false }));
    const { executionArn } = engine.startExecution({ input: { items } });
    let finished = 0;
    while (finished < items.length) {
      await vi_waitFor(() => release.length >= Math.min(most, items.length - finished));
      // Time for any iteration beyond the limit to start, were it allowed to.
      for (let turn = 0; turn < 50; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
      const batch = release.splice(0);
      finished += batch.length;
      for (const go of batch) go();
    }
    expect((await engine.waitForExecution(executionArn)).status).toBe('SUCCEEDED');
    expect(peak).toBe(most);
  });

  it('refuses a Map it would run differently: a failure tolerance, a mode it does not know (a distributed Map: test/local/distributed-map.test.ts)', () => {
    const definition = mapDefinition(2, { ToleratedFailureCount: 1 });
    expect(() => new LocalEngine({ definition, stateMachineArn: arn, tasks: {} })).toThrow(/ToleratedFailureCount/);
    (definition.States['Calls']!.ItemProcessor as Record<string, unknown>)['ProcessorConfig'] = { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' };
    // A distributed Map runs a ToleratedFailureCount; read from a Path it is refused.
    definition.States['Calls']!['ToleratedFailureCountPath'] = '$.tolerated';
    delete definition.States['Calls']!['ToleratedFailureCount'];
    expect(() => new LocalEngine({ definition, stateMachineArn: arn, tasks: {} })).toThrow(/State Calls uses ToleratedFailureCountPath \(not run by the local engine\)/);
    (definition.States['Calls']!.ItemProcessor as Record<string, unknown>)['ProcessorConfig'] = { Mode: 'SOMETHING' };
    expect(() => new LocalEngine({ definition, stateMachineArn: arn, tasks: {} })).toThrow(/ProcessorConfig.Mode: SOMETHING/);
  });
});

/** Waits (on the event loop, never a timer) until `ready` holds. */
async function vi_waitFor(ready: () => boolean): Promise<void> {
  for (let turns = 0; !ready(); turns++) {
    if (turns > 100_000) throw new Error('never became ready');
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}
