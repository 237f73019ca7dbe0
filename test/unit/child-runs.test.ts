import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { childRunId, defineAgent, defineAgentTool, defineTool } from '../../lambdas/define.js';
import { CircuitBreaker } from '../../lambdas/guards/breaker.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { ErrorNames } from '../../lambdas/shared/errors.js';
import { createCallTool, type CallToolResult } from '../../lambdas/steps/call-tool.js';
import { parentKill, shortfall, wakeParent } from '../../lambdas/tools/child-runs.js';
import { createExecutionStopped } from '../../lambdas/steps/execution-stopped.js';
import { RunId } from '../../lambdas/runs/run-request.js';
import { runRecord } from '../support/records.js';
import { killChildren } from '../../lambdas/runs/child-tree.js';
import type { RunRecord, TurnRecord } from '../../lambdas/records/ledger-records.js';

const now = new Date('2026-11-29T02:00:00.000Z');
const clock = { now: () => now };
const notes = defineAgent({ name: 'notes', model: 'sim:savepoint-sim-1', system: 's', input: z.object({ text: z.string() }), prompt: (input) => input.text, tools: [defineTool({ name: 'save', description: 's', input: z.object({}), effect: 'read', execute: async () => ({}) })] });
const delegate = defineAgentTool({ name: 'delegate', description: 'd', input: z.object({ text: z.string() }), agent: notes, budget: { maxDollars: 1, maxTokens: 10_000 } });
const parent = defineAgent({ name: 'parent', model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => 'p', tools: [delegate] });

describe('childRunId', () => {
  it('derives one valid run id per (run, turn, tool call id), readable when it fits', () => {
    expect(childRunId('nightly-2026-11-28', 3, 'toolu_01AbC')).toBe('nightly-2026-11-28-t3-toolu_01AbC');
    const long = childRunId('r'.repeat(80), 12, 'call:with/odd chars');
    expect(RunId().safeParse(long).success).toBe(true);
    expect(long).toBe(childRunId('r'.repeat(80), 12, 'call:with/odd chars'));
    expect(new Set([childRunId('r', 1, 'a'), childRunId('r', 2, 'a'), childRunId('r', 1, 'b'), childRunId('s', 1, 'a')]).size).toBe(4);
    // Sanitizing must not merge two calls: an id with characters a run id refuses is digested.
    expect(childRunId('r', 1, 'a:b')).not.toBe(childRunId('r', 1, 'a_b'));
  });
});

describe('defineAgentTool', () => {
  it('is a write with idempotency keys (the child run id is its key), marked as the child agent', () => {
    expect(delegate).toMatchObject({ effect: 'write', idempotencyKeys: true, child: { agent: { name: 'notes' }, budget: { maxDollars: 1, maxTokens: 10_000 } } });
    expect(delegate.child!.input({ text: 'x' })).toEqual({ text: 'x' });
  });

  it('fails when the agent is not an agent definition or the budget is not positive', () => {
    const base = { name: 'd', description: 'd', input: z.object({}), agent: notes, budget: { maxDollars: 1, maxTokens: 1 } };
    expect(() => defineAgentTool({ ...base, agent: { name: 'Not An Agent' } })).toThrow(/agent must be an agent definition/);
    expect(() => defineAgentTool({ ...base, budget: { maxDollars: 0, maxTokens: 1 } })).toThrow(/budget.maxDollars/);
    expect(() => defineAgentTool({ ...base, budget: { maxDollars: 1, maxTokens: 1.5 } })).toThrow(/budget.maxTokens/);
  });
});

describe('the child budget', () => {
  it('fits only in what the parent has left, reservations in flight counted', () => {
    const budget = { maxDollars: 1, maxTokens: 10_000 };
    const run = runRecord({ config: { ...runRecord().config, maxDollars: 2, maxTokens: 20_000 } });
    expect(shortfall(run, budget)).toBeUndefined();
    expect(shortfall({ ...run, costMicros: 1_200_000 }, budget)).toMatch(/\$1 is more than this run has left \(\$0\.8000\)/);
    expect(shortfall({ ...run, reservedTokens: 15_000 }, budget)).toMatch(/10000 tokens is more than this run has left \(5000\)/);
  });
});

/** The child of p1's call 1/1 (`delegate`), ended: started with the tool's budget, it spent less. */
const endedChild = (overrides: Partial<RunRecord>) =>
  runRecord({ runId: childRunId('p1', 1, 'c1'), agent: 'notes', config: { ...runRecord().config, maxDollars: 1, maxTokens: 10_000 }, costMicros: 250_000, inputTokens: 3_000, outputTokens: 200, parent: { runId: 'p1', turn: 1, call: 1 }, ...overrides });

/** A parent run p1 whose turn 1 calls its agent tool `delegate` once, and its CallTool. */
async function callToolSetUp(config = runRecord().config) {
  const ledger = EmbeddedLedger.open();
  await ledger.createRun(runRecord({ runId: 'p1', agent: 'parent', config }));
  await ledger.recordTurn({ kind: 'turn', runId: 'p1', turn: 1, model: 'sim:savepoint-sim-1', content: [{ type: 'tool_use', id: 'c1', name: 'delegate', input: { text: 'hi' } }], stopReason: 'tool_use', usage: { input_tokens: 1, output_tokens: 1 }, costMicros: 0, latencyMs: 0, recordedAt: now.toISOString() });
  const started: string[] = [];
  const woken: string[] = [];
  const callTool = createCallTool({
    agent: parent, agentDeps: () => undefined, ledger, clock, breaker: new CircuitBreaker(ledger, clock), leaseMs: 60_000, fingerprint: () => 'f',
    children: { start: async (agent, name) => void started.push(`${agent}/${name}`) },
    callbacks: { succeed: async (token) => (woken.push(token), true), fail: async () => true },
  });
  return { ledger, callTool, started, woken };
}

describe('an agent tool in CallTool', () => {
  const setUp = callToolSetUp;

  it('waits (Agent.ChildRunPending), then starts the child once with its budget reserved, and records its result once it finished', async () => {
    const { ledger, callTool, started } = await setUp();
    await expect(callTool({ runId: 'p1', turn: 1, call: 1 })).rejects.toMatchObject({ name: ErrorNames.ChildRunPending });
    await callTool({ runId: 'p1', turn: 1, call: 1, taskToken: 'token-1' });
    await callTool({ runId: 'p1', turn: 1, call: 1, taskToken: 'token-2' });
    const child = childRunId('p1', 1, 'c1');
    expect(started).toEqual([`notes/${child}`, `notes/${child}`]);
    // Reserved once, whatever the number of starts: the child's $1 and 10,000 tokens.
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 1_000_000, inputTokens: 10_000 });
    expect(await ledger.getChildWait({ runId: 'p1', turn: 1, call: 1 })).toBe('token-2');

    await ledger.createRun(endedChild({ status: 'succeeded', report: { saved: 1 } }));
    const result = (await callTool({ runId: 'p1', turn: 1, call: 1 })) as CallToolResult;
    expect(result).toMatchObject({ name: 'delegate', outcome: 'ok' });
    expect(JSON.parse((await ledger.getCall('p1', 1, 1))!.result!)).toEqual({ childRunId: child, status: 'succeeded', report: { saved: 1 }, dollars: 0.25 });
    // What the child did not spend returned: the parent carries the child's spend.
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 250_000, inputTokens: 3_000, outputTokens: 200 });
  });

  it('settles an ended child when its run stops at the call (killed): the parent carries what the child spent, not its reservation', async () => {
    const { ledger, callTool } = await setUp();
    await callTool({ runId: 'p1', turn: 1, call: 1, taskToken: 'token-1' });
    await ledger.createRun(endedChild({ status: 'killed' }));
    await ledger.killRun('p1', { by: 'alice', at: now.toISOString(), reason: 'wrong day' });
    expect(await callTool({ runId: 'p1', turn: 1, call: 1 })).toMatchObject({ outcome: 'skipped' });
    expect(await callTool({ runId: 'p1', turn: 1, call: 1 })).toMatchObject({ outcome: 'skipped' });
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 250_000, inputTokens: 3_000, outputTokens: 200 });
  });

  it('answers the model with an error, starting nothing, when the child\'s budget does not fit what the run has left', async () => {
    const { ledger, callTool, started } = await setUp({ ...runRecord().config, maxDollars: 0.5 });
    expect(await callTool({ runId: 'p1', turn: 1, call: 1 })).toMatchObject({ outcome: 'error' });
    expect(JSON.parse((await ledger.getCall('p1', 1, 1))!.result!)).toMatchObject({ error: 'child_budget_exceeds_remaining' });
    expect(started).toEqual([]);
  });
});

describe('a child run that ends after its parent (ExecutionStopped)', () => {
  const wait = { runId: 'p1', turn: 1, call: 1 };
  const child = childRunId('p1', 1, 'c1');
  const ended = (status: 'SUCCEEDED' | 'ABORTED') => ({
    'detail-type': 'Step Functions Execution Status Change',
    source: 'aws.states',
    detail: { executionArn: `arn:${child}`, status, input: JSON.stringify({ runId: child, input: { text: 'hi' }, config: { maxDollars: 1, maxTokens: 10_000 }, parent: wait }) },
  });
  /** The parent reserved its child's budget (AwaitChildRun) and ended `status` while the child ran; the child then ended. */
  const setUp = async (status: 'killed' | 'failed' | 'running') => {
    const { ledger, callTool } = await callToolSetUp();
    await callTool({ runId: 'p1', turn: 1, call: 1, taskToken: 'token-1' });
    if (status !== 'running') await ledger.finishRun('p1', { status }, now);
    await ledger.createRun(endedChild({ status: 'killed' }));
    const woken: string[] = [];
    const stopped = createExecutionStopped({ ledger, clock, callbacks: { succeed: async (token) => (woken.push(token), true), fail: async () => true } });
    return { ledger, callTool, stopped, woken };
  };

  it('settles the child\'s budget into its ended parent once: a second delivery of the same end changes nothing', async () => {
    const { ledger, stopped } = await setUp('killed');
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 1_000_000, inputTokens: 10_000 });
    await stopped(ended('SUCCEEDED'));
    await stopped(ended('SUCCEEDED'));
    expect(await ledger.getRun('p1')).toMatchObject({ status: 'killed', costMicros: 250_000, inputTokens: 3_000, outputTokens: 200 });
  });

  it('wakes the parent when its child\'s stop reaches two functions at once and the one that cannot wake it ends the child first', async () => {
    // A child's stop reaches the rule of its own agent (a function with no way to the parent's
    // wait) and the parent's rule on the child's state machine (which wakes it). Both read the
    // child running; the first ends it; the second finds it ended and must still settle and wake.
    const { ledger, callTool } = await callToolSetUp();
    await callTool({ runId: 'p1', turn: 1, call: 1, taskToken: 'token-1' });
    await ledger.createRun(endedChild({ status: 'running' }));
    let parentRuleRead!: () => void;
    const read = new Promise<void>((resolve) => (parentRuleRead = resolve));
    let childRuleEnded!: () => void;
    const childEnded = new Promise<void>((resolve) => (childRuleEnded = resolve));
    const childRules = new Proxy(ledger, { get: (target, property) => (property === 'finishRun' ? async (...args: Parameters<typeof ledger.finishRun>) => (await read, target.finishRun(...args).finally(childRuleEnded)) : Reflect.get(target, property)) });
    const parentRules = new Proxy(ledger, {
      get: (target, property) =>
        property === 'getRun'
          ? async (runId: string) => target.getRun(runId).finally(parentRuleRead)
          : property === 'finishRun'
            ? async (...args: Parameters<typeof ledger.finishRun>) => (await childEnded, target.finishRun(...args))
            : Reflect.get(target, property),
    });
    const woken: string[] = [];
    const ownRule = createExecutionStopped({ ledger: childRules, clock });
    const parentRule = createExecutionStopped({ ledger: parentRules, clock, callbacks: { succeed: async (token) => (woken.push(token), true), fail: async () => true } });
    const answers = await Promise.all([ownRule(ended('ABORTED')), parentRule(ended('ABORTED'))]);
    expect(answers.map((answer) => answer.action)).toEqual(['killed', 'woke']);
    expect(woken).toEqual(['token-1']);
    expect(await ledger.getRun(child)).toMatchObject({ status: 'killed' });
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 250_000, inputTokens: 3_000, outputTokens: 200, childRunsOpen: 0 });
  });

  it('settles once whichever path comes first: a parent resumed after the child\'s end records its result and counts nothing again', async () => {
    const { ledger, callTool, stopped } = await setUp('failed');
    await stopped(ended('SUCCEEDED'));
    await ledger.attachExecution('p1', 'arn:p1-2', now);
    expect(await callTool({ runId: 'p1', turn: 1, call: 1 })).toMatchObject({ name: 'delegate', outcome: 'error' });
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 250_000, inputTokens: 3_000, outputTokens: 200 });
  });

  it('settles a running parent\'s reservation at the child\'s end too, and wakes its wait: its CallTool then counts nothing again', async () => {
    const { ledger, callTool, stopped, woken } = await setUp('running');
    expect(await stopped(ended('SUCCEEDED'))).toMatchObject({ action: 'woke' });
    expect(woken).toEqual(['token-1']);
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 250_000, inputTokens: 3_000, outputTokens: 200 });
    expect(await callTool({ runId: 'p1', turn: 1, call: 1 })).toMatchObject({ name: 'delegate', outcome: 'error' });
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 250_000, inputTokens: 3_000, outputTokens: 200 });
  });

  it('counts the reservation and the settle once however many steps the run counts between them (a turn of more than 60 calls)', async () => {
    const { ledger, callTool, stopped } = await setUp('running');
    // The turn's other calls count on the run meanwhile (their children's reservations and settles, approval waits).
    const others = async (from: string) => {
      for (let index = 0; index < 70; index++) await ledger.countStep('p1', `wait:${from}:${index}`, { approvalWaitMs: 1 });
    };
    await others('a');
    await stopped(ended('SUCCEEDED'));
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 250_000, inputTokens: 3_000, outputTokens: 200, childRunsOpen: 0 });
    // The parent's CallTool reads the child's end 70 steps later, and a second delivery of that end comes 70 more after.
    await others('b');
    expect(await callTool({ runId: 'p1', turn: 1, call: 1 })).toMatchObject({ name: 'delegate', outcome: 'error' });
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 250_000, inputTokens: 3_000, outputTokens: 200, childRunsOpen: 0 });
    await others('c');
    await stopped(ended('SUCCEEDED'));
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 250_000, inputTokens: 3_000, outputTokens: 200, childRunsOpen: 0 });
  });

  /** `ledger`, counting what ExecutionStopped reads to find an execution's run: each run record's reads (getRun, by run id) and StartRun's notes (runOfExecution). */
  const countingReads = (ledger: EmbeddedLedger) => {
    const reads: string[] = [];
    const counted = new Proxy(ledger, {
      get: (target, property) => {
        const value = Reflect.get(target, property, target) as unknown;
        if (property !== 'getRun' && property !== 'runOfExecution') return typeof value === 'function' ? value.bind(target) : value;
        return (key: string) => (reads.push(`${property} ${key}`), (value as (key: string) => Promise<unknown>).call(target, key));
      },
    });
    const of = (key: string) => reads.filter((read) => read.endsWith(` ${key}`)).length;
    return { ledger: counted, of, reset: () => void reads.splice(0) };
  };

  it('hears the end of a child resumed before it was settled (its execution\'s input names no parent, its record does): settles it and wakes the parent', async () => {
    const { ledger, callTool } = await callToolSetUp();
    await callTool({ runId: 'p1', turn: 1, call: 1, taskToken: 'token-1' });
    await ledger.createRun(endedChild({ status: 'succeeded', executionArn: 'arn:resumed', executions: ['arn:first', 'arn:resumed'] }));
    const woken: string[] = [];
    const reads = countingReads(ledger);
    const stopped = createExecutionStopped({ ledger: reads.ledger, clock, callbacks: { succeed: async (token) => (woken.push(token), true), fail: async () => true } });
    const resumed = { ...ended('SUCCEEDED'), detail: { executionArn: 'arn:resumed', status: 'SUCCEEDED', input: JSON.stringify({ runId: child, input: { text: 'hi' } }) } };
    expect(await stopped(resumed)).toMatchObject({ runId: child, action: 'woke' });
    expect(woken).toEqual(['token-1']);
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 250_000, inputTokens: 3_000, outputTokens: 200, childRunsOpen: 0 });
    // The child's record read once (its input names the run: no note read).
    expect([reads.of(child), reads.of('arn:resumed')]).toEqual([1, 0]);
    reads.reset();
    // An earlier execution's end (the one the resume replaced) is not the run's: nothing more.
    expect(await stopped({ ...resumed, detail: { ...resumed.detail, executionArn: 'arn:first' } })).toMatchObject({ action: 'ignored' });
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 250_000, childRunsOpen: 0 });
    expect(reads.of(child)).toBe(1);
  });

  it('kills a resumed child whose execution was stopped, its run found by StartRun\'s note, reading its record and the note once: settled, its parent woken', async () => {
    const { ledger, callTool } = await callToolSetUp();
    await callTool({ runId: 'p1', turn: 1, call: 1, taskToken: 'token-1' });
    await ledger.createRun(endedChild({ status: 'running', executionArn: 'arn:resumed', executions: ['arn:first', 'arn:resumed'] }));
    await ledger.noteExecutionRun('arn:resumed', child);
    const woken: string[] = [];
    const reads = countingReads(ledger);
    const stopped = createExecutionStopped({ ledger: reads.ledger, clock, callbacks: { succeed: async (token) => (woken.push(token), true), fail: async () => true } });
    // An input that names no run (the note says which), as a scheduled start's.
    const aborted = { ...ended('ABORTED'), detail: { executionArn: 'arn:resumed', status: 'ABORTED', error: 'Operator.Stop', input: JSON.stringify({ nightly: true }) } };
    expect(await stopped(aborted)).toMatchObject({ runId: child, action: 'woke' });
    expect(await ledger.getRun(child)).toMatchObject({ status: 'killed', stopReason: expect.stringMatching(/^killed by StopExecution at .*: Operator\.Stop$/) });
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 250_000, inputTokens: 3_000, outputTokens: 200, childRunsOpen: 0 });
    expect(woken).toEqual(['token-1']);
    expect([reads.of(child), reads.of('arn:resumed')]).toEqual([1, 1]);
  });

  it('settles a child whose own child ends after it only once that one is settled into it, then up the tree, once', async () => {
    const { ledger, stopped } = await setUp('killed');
    // The child reserved $0.5 and 5,000 tokens for a grandchild, which ends after it.
    const grandchild = childRunId(child, 1, 'g1');
    const childNow = (await ledger.getRun(child))!;
    expect(childNow.status).toBe('killed');
    await ledger.countStep(child, 'child:1:1:reserve', { costMicros: 500_000, inputTokens: 5_000, childRunsOpen: 1 });
    await ledger.createRun(runRecord({ runId: grandchild, agent: 'notes', status: 'killed', config: { ...runRecord().config, maxDollars: 0.5, maxTokens: 5_000 }, costMicros: 100_000, inputTokens: 1_000, outputTokens: 50, parent: { runId: child, turn: 1, call: 1 } }));
    const grandchildEnded = { ...ended('ABORTED'), detail: { executionArn: `arn:${grandchild}`, status: 'SUCCEEDED', input: JSON.stringify({ runId: grandchild, input: { text: 'hi' }, parent: { runId: child, turn: 1, call: 1 } }) } };

    // The child's end: its spend is not final (its grandchild is open), so its parent keeps the reservation.
    await stopped(ended('SUCCEEDED'));
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 1_000_000, inputTokens: 10_000 });
    // The grandchild's end settles it into the child, whose spend is then final: the child into the parent.
    await stopped(grandchildEnded);
    await stopped(grandchildEnded);
    await stopped(ended('SUCCEEDED'));
    expect(await ledger.getRun(child)).toMatchObject({ costMicros: 350_000, inputTokens: 4_000, outputTokens: 250, childRunsOpen: 0 });
    expect(await ledger.getRun('p1')).toMatchObject({ costMicros: 350_000, inputTokens: 4_000, outputTokens: 250, childRunsOpen: 0 });
  });
});

describe('a child run\'s end and its parent\'s kill', () => {
  it('wakes the parent\'s wait once the child is over, not while it runs', async () => {
    const ledger = EmbeddedLedger.open();
    const woken: string[] = [];
    const callbacks = { succeed: async (token: string) => (woken.push(token), true), fail: async () => true };
    await ledger.storeChildWait({ runId: 'p1', turn: 1, call: 1 }, 'token-1');
    const child = runRecord({ runId: 'c1', parent: { runId: 'p1', turn: 1, call: 1 } });
    expect(await wakeParent({ ledger, callbacks }, child)).toBe(false);
    expect(await wakeParent({ ledger, callbacks }, { ...child, status: 'failed' })).toBe(true);
    expect(woken).toEqual(['token-1']);
  });

  it('kills a running child whose parent is killed, naming the parent; leaves it be otherwise', async () => {
    const ledger = EmbeddedLedger.open();
    await ledger.createRun(runRecord({ runId: 'p1' }));
    await ledger.createRun(runRecord({ runId: 'c1', parent: { runId: 'p1', turn: 1, call: 1 } }));
    expect(await parentKill(ledger, (await ledger.getRun('c1'))!, now)).toBeUndefined();
    await ledger.killRun('p1', { by: 'alice', at: now.toISOString(), reason: 'wrong day' });
    const killed = await parentKill(ledger, (await ledger.getRun('c1'))!, now);
    expect(killed?.killed).toEqual({ by: 'parent run p1', at: now.toISOString(), reason: 'its parent run p1 was killed by alice: wrong day' });
    expect((await ledger.getRun('c1'))!.killed).toEqual(killed!.killed);
  });
});

describe('killing a tree (killChildren)', () => {
  const middle = defineAgent({ name: 'middle', model: 'sim:savepoint-sim-1', system: 's', input: z.object({ text: z.string() }), prompt: (input) => input.text, tools: [delegate] });
  const top = defineAgent({ name: 'top', model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => 'p', tools: [defineAgentTool({ name: 'ask', description: 'a', input: z.object({ text: z.string() }), agent: middle, budget: { maxDollars: 1, maxTokens: 10_000 } })] });
  const turn = (runId: string, uses: { id: string; name: string }[]): TurnRecord => ({ kind: 'turn', runId, turn: 1, model: 'sim:savepoint-sim-1', content: uses.map((use) => ({ type: 'tool_use', id: use.id, name: use.name, input: { text: 'x' } })), stopReason: 'tool_use', usage: { input_tokens: 1, output_tokens: 1 }, costMicros: 0, latencyMs: 0, recordedAt: now.toISOString() });
  const flag = { by: 'alice', at: now.toISOString(), reason: 'wrong day' };

  it("records the kill of each running child and grandchild, by its parent with who asked; stops only the direct children's executions; leaves ended ones be", async () => {
    const ledger = EmbeddedLedger.open();
    const [m1, m2] = [childRunId('t1', 1, 'a'), childRunId('t1', 1, 'b')];
    const g1 = childRunId(m1, 1, 'c');
    await ledger.createRun(runRecord({ runId: 't1', agent: 'top' }));
    await ledger.recordTurn(turn('t1', [{ id: 'a', name: 'ask' }, { id: 'b', name: 'ask' }]));
    await ledger.createRun(runRecord({ runId: m1, agent: 'middle', executionArn: 'arn:m1', parent: { runId: 't1', turn: 1, call: 1 } }));
    await ledger.createRun(runRecord({ runId: m2, agent: 'middle', status: 'succeeded', executionArn: 'arn:m2', parent: { runId: 't1', turn: 1, call: 2 } }));
    await ledger.recordTurn(turn(m1, [{ id: 'c', name: 'delegate' }]));
    await ledger.createRun(runRecord({ runId: g1, agent: 'notes', executionArn: 'arn:g1', parent: { runId: m1, turn: 1, call: 1 } }));

    const stopped: string[] = [];
    const killed = await killChildren({ ledger, now, children: { stop: async (agent, arn, cause) => void stopped.push(`${agent} ${arn} ${cause}`) } }, top, (await ledger.getRun('t1'))!, flag);
    expect(killed.map((run) => run.runId)).toEqual([m1]);
    expect((await ledger.getRun(m1))!.killed).toEqual({ by: 'parent run t1', at: now.toISOString(), reason: 'its parent run t1 was killed by alice: wrong day' });
    expect((await ledger.getRun(g1))!.killed).toEqual({ by: `parent run ${m1}`, at: now.toISOString(), reason: `its parent run ${m1} was killed: its parent run t1 was killed by alice: wrong day` });
    expect((await ledger.getRun(m2))!.killed).toBeUndefined();
    // The grandchild's execution is its own parent's to stop (that agent's ExecutionStopped, when the middle one's is aborted).
    expect(stopped).toEqual(['middle arn:m1 Savepoint.ParentKilled: its parent run t1 was killed by alice: wrong day']);
  });

  it("kills no run a fork's copied call names: that child is its parent's, not the fork's", async () => {
    const ledger = EmbeddedLedger.open();
    const original = childRunId('t1', 1, 'a');
    await ledger.createRun(runRecord({ runId: original, agent: 'middle', executionArn: 'arn:m1', parent: { runId: 't1', turn: 1, call: 1 } }));
    await ledger.createRun(runRecord({ runId: 't1-fork', agent: 'top' }));
    await ledger.recordTurn(turn('t1-fork', [{ id: 'a', name: 'ask' }]));
    // The fork's copy of the parent's call: its result names the parent's child.
    await ledger.recordCall({ kind: 'tool', runId: 't1-fork', turn: 1, call: 1, toolCallId: 'a', name: 'ask', args: { text: 'x' }, effect: 'write', idempotencyKey: 'k', status: 'completed', leaseUntil: now.toISOString(), attempts: 1, outcome: 'ok', result: JSON.stringify({ childRunId: original, status: 'succeeded' }) }, now);
    expect(await killChildren({ ledger, now }, top, (await ledger.getRun('t1-fork'))!, flag)).toEqual([]);
    expect((await ledger.getRun(original))!.killed).toBeUndefined();
  });
});

