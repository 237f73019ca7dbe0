import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ContentBlock, MessageRequest, ToolResultBlock, ToolUseBlock } from '../../lambdas/records/messages.js';
import { parseBlobRef, readResult } from '../../lambdas/ledger/blobs.js';
import { defineAgent, defineTool, type DevWorld, type ModelPolicy, type ToolContext, type ToolDefinition } from '../../lambdas/define.js';
import type { LocalStack, LocalStackOptions } from '../../local/runtime/local-stack.js';
import { walkStates, type AslDefinition, type CfnTemplateJson } from '../../local/template/asl.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { summarizeHistory } from '../../local/engine/local-engine.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import { nextCallReservation } from '../../lambdas/guards/request-size.js';
import { postDecision, startAgentHarness, wake, waitFor, type AgentHarness } from '../support/agent-harness.js';
import { manualClock, skippingClock } from '../support/manual-clock.js';
import { skipSettleWaits } from '../../testing/index.js';
import { TASK_TIMEOUT_MARGIN } from '../../infra/agent-state-machine.js';
import { TIMEOUT_EARLY_MS } from '../../lambdas/adapters/middleware.js';

/**
 * What stops a run, on the synthesized definition: a model that errs, a tool that throws or hangs,
 * the wall clock running out in the middle of a call. The agent is the test's own: a few generic
 * tools and a scripted model, one turn of the script per model turn, each reading what the model
 * was just told.
 */

type Turn = ReturnType<ModelPolicy>;
type Script = ((results: ToolResultBlock[], said: string) => Turn)[];

const use = (id: string, name: string, input: Record<string, unknown>): ToolUseBlock => ({ type: 'tool_use', id, name, input });
const calls = (...blocks: ToolUseBlock[]): Turn => ({ content: blocks, stop_reason: 'tool_use' });
const finish = (text = 'Done.'): Turn => ({ content: [{ type: 'text', text }], stop_reason: 'end_turn' });

/** The tool results of the request's latest user turn, and its text. */
function resultsOf(request: MessageRequest): ToolResultBlock[] {
  const last = request.messages.at(-1)!;
  return Array.isArray(last.content) ? last.content.filter((block): block is ToolResultBlock => block.type === 'tool_result') : [];
}
function textOf(request: MessageRequest): string {
  const last = request.messages.at(-1)!;
  return typeof last.content === 'string' ? last.content : last.content.map((block: ContentBlock) => (block.type === 'text' ? block.text : '')).join('\n');
}

function scriptedAgent(tools: ToolDefinition[], script: Script, seen: ToolResultBlock[][] = []) {
  return defineAgent({
    name: 'stops',
    model: 'sim:savepoint-sim-1',
    system: 'Do the task.',
    input: z.object({ id: z.string() }),
    prompt: () => 'Do the task.',
    tools,
    dev: {
      policy: (request) => {
        const turn = request.messages.filter((message) => message.role === 'assistant').length;
        const results = resultsOf(request);
        seen.push(results);
        const next = script[turn];
        if (!next) throw new Error(`the script has no turn ${turn + 1}`);
        return next(results, textOf(request));
      },
    },
  });
}

const lookup = defineTool({
  name: 'lookup',
  description: 'Looks a record up by id.',
  input: z.object({ id: z.string() }),
  effect: 'read',
  execute: async ({ id }) => ({ id, found: true }),
});

const noArgs = z.object({});

/** A tool of no arguments: the throwing, hung and stuck tools below differ only in how they behave. */
const bareTool = (tool: Omit<ToolDefinition<z.infer<typeof noArgs>>, 'input'>) => defineTool({ ...tool, input: noArgs });

/** A tool whose every call throws a plain Error (after `before`: what it did first). */
const throwing = (name: string, effect: 'read' | 'write', message: string, before?: () => void) =>
  bareTool({
    name,
    description: 'Fails.',
    effect,
    execute: async () => {
      before?.();
      throw new Error(message);
    },
  });

/** A Task state's TimeoutSeconds in the definition (the one inside the tool calls' Map included). */
function taskTimeoutSeconds(definition: AslDefinition, stateName: string): number {
  let seconds: number | undefined;
  walkStates(definition, (name, state) => {
    if (name === stateName) seconds = state.TimeoutSeconds;
  });
  if (seconds === undefined) throw new Error(`no TimeoutSeconds on Task ${stateName}`);
  return seconds;
}

let harness: AgentHarness<DevWorld> | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

/** The local stack running `agent`, waking `waitFor` on every engine event and ledger write. */
async function start(agent: ReturnType<typeof scriptedAgent>, options: Partial<LocalStackOptions> = {}): Promise<LocalStack> {
  harness = await startAgentHarness({ agent, ...options });
  return harness.stack;
}

async function run(current: LocalStack, runId: string, config: Record<string, unknown> = {}) {
  const { executionArn } = current.engine.startExecution({ name: runId, input: { runId, input: { id: runId }, config } });
  const finished = await current.engine.waitForExecution(executionArn);
  return { ...finished, states: summarizeHistory(current.engine.getExecutionHistory(executionArn)), output: JSON.parse(finished.output ?? '{}') as { status?: string; reason?: string } };
}

const parsed = (block: ToolResultBlock | undefined) => JSON.parse(String(block?.content)) as { error?: string; message?: string; issues?: { path: string }[] };

describe("what a tool returns is recorded as it ran", () => {
  it('records a write that returns nothing as null, and one whose value has no JSON once, as that error, failing the run without sending it again', async () => {
    let sent = 0;
    const nothing = bareTool({ name: 'send_mail', description: 'Sends a mail.', effect: 'write', idempotencyKeys: true, execute: async () => undefined });
    const bigint = bareTool({
      name: 'count_up',
      description: 'Counts.',
      effect: 'write',
      idempotencyKeys: true,
      execute: async () => {
        sent += 1;
        return { count: 10n };
      },
    });
    const seen: ToolResultBlock[][] = [];
    const agent = scriptedAgent([nothing, bigint], [() => calls(use('m1', 'send_mail', {})), ([answer]) => (answer?.content === 'null' && !answer.is_error ? calls(use('c1', 'count_up', {})) : finish('not null')), () => finish('unreachable')], seen);
    const logged: string[] = [];
    const current = await start(agent, { log: (line) => logged.push(line) });
    const finished = await run(current, 'results');

    expect(finished.status).toBe('FAILED');
    expect(JSON.parse(finished.cause!)).toMatchObject({ errorType: 'Agent.Terminal' });
    // Sent once: it ran, so no retry re-sends it for the same answer.
    expect(sent).toBe(1);
    expect(finished.states['CallTool']).toMatchObject({ entered: 2, invocations: 2 });
    const { calls: records } = await current.ledger.listConversation('results');
    expect(records.map((record) => [record.name, record.status, record.outcome, record.result])).toEqual([
      ['send_mail', 'completed', 'ok', 'null'],
      ['count_up', 'completed', 'error', JSON.stringify({ error: 'unrecordable_result', message: 'count_up returned a value that is not JSON (Do not know how to serialize a BigInt): it ran and is not sent again; its result could not be recorded' })],
    ]);
    expect(await current.ledger.getRun('results')).toMatchObject({ status: 'failed', error: { error: 'Agent.Terminal' } });
    expect(logged.map((line) => JSON.parse(line) as Record<string, string>).filter((line) => line['message'] === 'tool failed').map((line) => [line['tool'], line['error']])).toEqual([['count_up', 'TypeError']]);
  });
});

describe("a bug in the agent's own hook", () => {
  it('fails the run closed, nothing sent, and leaves where it was thrown in the engine log', async () => {
    let sent = 0;
    const guarded = bareTool({
      name: 'guarded_write',
      description: 'Writes, when its rule allows.',
      effect: 'write',
      idempotencyKeys: true,
      needsApproval: () => {
        throw new Error('the approval rule broke');
      },
      execute: async () => {
        sent += 1;
        return { written: true };
      },
    });
    const agent = scriptedAgent([guarded], [() => calls(use('g1', 'guarded_write', {})), () => finish()]);
    const logged: string[] = [];
    const current = await start(agent, { log: (line) => logged.push(line) });
    const finished = await run(current, 'hook-bug');

    expect(finished.status).toBe('FAILED');
    expect(sent).toBe(0);
    const errors = logged.map((line) => JSON.parse(line) as Record<string, string>).filter((line) => line['message'] === 'the approval rule broke');
    expect(errors[0]).toMatchObject({ level: 'ERROR', error: 'Error', stack: expect.stringMatching(/^Error: the approval rule broke\n\s+at .*test\/engine\/stops\.test\.ts:\d+:\d+/) });
  });
  it('fails the run closed when needsApproval returns another shape than ApprovalRequest, naming the tool, needsApproval and the field', async () => {
    // An agent in plain JavaScript (or typed `any`): `amount` as a number, not { minor, currency }.
    let sent = 0;
    const needsApproval = (() => ({ summary: 'pay 5.00', amount: 500 })) as unknown as ToolDefinition['needsApproval'];
    const pay = bareTool({ name: 'pay', description: 'Pays.', effect: 'write', idempotencyKeys: true, needsApproval, execute: async () => ((sent += 1), { paid: true }) });
    const agent = scriptedAgent([pay], [() => calls(use('p1', 'pay', {})), () => finish()]);
    const current = await start(agent, { log: () => {} });
    let ended: Awaited<ReturnType<typeof run>> | undefined;
    void run(current, 'rule-shape', { approvalTimeoutSeconds: 3600 }).then((done) => (ended = done));
    // Nobody is asked to decide a call whose request could not be shown (before the fix: asked, amount {}).
    const outcome = await waitFor(() => (harness!.approvals[0] ? `asked: ${JSON.stringify(harness!.approvals[0].amount)}` : ended?.status));
    expect(outcome).toBe('FAILED');
    expect(sent).toBe(0);
    const record = await current.ledger.getRun('rule-shape');
    expect(record).toMatchObject({ status: 'failed', error: { error: 'TypeError' } });
    expect(JSON.stringify(record?.error)).toMatch(/tool pay: needsApproval must return .*amount: .*expected object/);
  });

  it('takes null and false from needsApproval as no approval, as undefined (JavaScript: `cents > 50_000 && { … }`)', async () => {
    let sent = 0;
    const answers = [null, false];
    const needsApproval = (() => answers.shift()) as unknown as ToolDefinition['needsApproval'];
    const pay = bareTool({ name: 'pay', description: 'Pays.', effect: 'write', idempotencyKeys: true, needsApproval, execute: async () => ((sent += 1), { paid: true }) });
    const agent = scriptedAgent([pay], [() => calls(use('p1', 'pay', {}), use('p2', 'pay', {})), () => finish()]);
    const current = await start(agent, { log: () => {} });
    expect((await run(current, 'rule-falsy')).status).toBe('SUCCEEDED');
    expect(sent).toBe(2);
    expect(harness!.approvals).toEqual([]);
  });
});

describe('a model mistake is answered to the model', () => {
  it('answers bad arguments, an unknown tool and a throwing read with error results, and the model corrects itself', async () => {
    const flakyRead = throwing('flaky_read', 'read', 'backend said no');
    const seen: ToolResultBlock[][] = [];
    const agent = scriptedAgent(
      [lookup, flakyRead],
      [
        () => calls(use('t1', 'lookup', { id: 5 })),
        // Each turn reads the answer to its last call: the field, the tool list, the message.
        ([answer]) => (answer?.is_error && parsed(answer).issues?.[0]?.path === 'id' ? calls(use('t2', 'look_up', { id: '5' })) : finish('not told')),
        // A call of a tool that does not exist cannot be a tool_use in the history: it is told as text.
        (_results, said) => (said.includes('there is no tool \\"look_up\\"; the tools are: lookup, flaky_read') ? calls(use('t3', 'flaky_read', {})) : finish('not told')),
        ([answer]) => (answer?.is_error && parsed(answer).message === 'flaky_read failed: backend said no' ? calls(use('t4', 'lookup', { id: '5' })) : finish('not told')),
        ([answer]) => finish(answer?.is_error ? 'still wrong' : 'Done.'),
      ],
      seen,
    );
    const logged: string[] = [];
    const current = await start(agent, { log: (line) => logged.push(line) });
    const finished = await run(current, 'mistakes');

    expect(finished.status, finished.cause).toBe('SUCCEEDED');
    expect(finished.output).toMatchObject({ status: 'succeeded', reason: 'done' });
    // No attempt failed: every mistake was an answer, not an error of the run.
    expect(finished.states['CallTool']).toMatchObject({ entered: 4, invocations: 4, failures: 0 });
    expect(parsed(seen[1]![0])).toEqual({ error: 'invalid_arguments', message: 'invalid arguments of lookup: id: Invalid input: expected string, received number', issues: [{ path: 'id', message: 'Invalid input: expected string, received number' }] });
    expect(seen[2]).toEqual([]);
    expect(parsed(seen[3]![0])).toEqual({ error: 'tool_failed', message: 'flaky_read failed: backend said no' });
    expect(parsed(seen[4]![0])).toEqual({ id: '5', found: true });
    // Recorded like any result: the ledger holds exactly what the model was told.
    const { calls: records } = await current.ledger.listConversation('mistakes');
    expect(records.map((record) => [record.name, record.status, record.outcome])).toEqual([
      ['lookup', 'completed', 'error'],
      ['look_up', 'completed', 'error'],
      ['flaky_read', 'completed', 'error'],
      ['lookup', 'completed', 'ok'],
    ]);
    expect(JSON.parse(records[1]!.result!)).toEqual({ error: 'unknown_tool', message: 'there is no tool "look_up"; the tools are: lookup, flaky_read' });
    expect(records.map((record) => record.result)).toEqual([seen[1]![0]!.content, records[1]!.result, seen[3]![0]!.content, seen[4]![0]!.content]);
    // The tool's own failure is the operator's to see, with where it was thrown; the model's mistakes are not logged.
    const failures = logged.map((line) => JSON.parse(line) as Record<string, string>).filter((line) => line['message'] === 'tool failed');
    expect(failures).toEqual([{ level: 'ERROR', message: 'tool failed', tool: 'flaky_read', error: 'Error', errorMessage: 'backend said no', stack: expect.stringMatching(/^Error: backend said no\n\s+at .*test\/engine\/stops\.test\.ts:\d+:\d+/) }]);
  });
});

describe('a write that throws is an unknown outcome', () => {
  it('reconciles a write that threw after taking effect, and does not send it again', async () => {
    const sent: string[] = [];
    const notify = defineTool({
      name: 'notify',
      description: 'Sends a note (the provider has no idempotency keys).',
      input: z.object({ to: z.string() }),
      effect: 'write',
      reconcile: async (_args, context) => (sent.includes(context.idempotencyKey) ? { found: true, result: { sent: true, reconciled: true } } : { found: false }),
      execute: async (_args, context) => {
        sent.push(context.idempotencyKey);
        // The provider took it, and then the connection broke: the tool cannot know.
        if (sent.length === 1) throw new Error('socket hang up');
        return { sent: true };
      },
    });
    const seen: ToolResultBlock[][] = [];
    // Real time, the settle wait skipped: the clock moves by the seconds the state machine waits.
    const clock = skippingClock();
    const current = await start(scriptedAgent([notify], [() => calls(use('t1', 'notify', { to: 'a' })), () => finish()], seen), { clock });
    skipSettleWaits(current.engine, clock.advance);
    const finished = await run(current, 'throwing-write');

    expect(finished.output).toMatchObject({ status: 'succeeded' });
    expect(sent).toHaveLength(1);
    expect(parsed(seen[1]![0])).toEqual({ sent: true, reconciled: true });
    // The throw was retried as an unknown outcome (Agent.Transient), through the claim, once the
    // tool's settle time from the send had passed (Agent.SettleWait until then, waited out by the
    // state machine: reconcile never looks too early).
    expect(finished.states['CallTool']).toMatchObject({ errors: { 'Agent.Transient': 1, 'Agent.SettleWait': expect.any(Number) } });
    expect(finished.states['CallTool']!.invocations).toBe(2 + finished.states['CallTool']!.errors['Agent.SettleWait']!);
    const [record] = (await current.ledger.listConversation('throwing-write')).calls;
    expect(record).toMatchObject({ status: 'completed', outcome: 'ok', attempts: 2 });
  });

  it('answers the model that a write without reconcile or keys has an unknown outcome, and does not send it again', async () => {
    let sends = 0;
    const post = throwing('post', 'write', 'socket hang up', () => (sends += 1));
    const seen: ToolResultBlock[][] = [];
    const current = await start(scriptedAgent([post], [() => calls(use('t1', 'post', {})), () => finish()], seen));
    const finished = await run(current, 'unknown-write');

    expect(finished.output).toMatchObject({ status: 'succeeded' });
    expect(sends).toBe(1);
    // Escalated to a person (a guard event, the EffectsEscalated alarm), never sent again.
    expect(parsed(seen[1]![0])).toEqual({
      error: 'outcome_unknown',
      escalated: true,
      message: 'post: the outcome is unknown (post failed: socket hang up); escalated to a person to check with the provider. It was not sent again: do not call post for this again.',
    });
    expect((await current.ledger.getRun('unknown-write'))!.guardEvents).toContainEqual(expect.objectContaining({ guard: 'effect', action: 'stopped' }));
  });
});

/** A promise that never settles: a provider that never answers (and ignores the abort signal). */
const never = () => new Promise<never>(() => undefined);

/** A tool that never answers and ignores its signal, once `onCall` has run (what it did first). */
const hanging = (tool: Pick<ToolDefinition, 'name' | 'effect' | 'timeoutMs' | 'reconcile'>, onCall: (context: ToolContext) => void = () => undefined) =>
  bareTool({
    description: 'Never answers.',
    ...tool,
    execute: async (_args, context) => {
      onCall(context);
      return never();
    },
  });

describe('a hung tool', () => {
  it('is stopped by its timeout: a read is answered to the model, a write is reconciled, not sent twice', async () => {
    // The tools' timeouts run on the stack's clock: they fire as the test moves it, with no real wait.
    const clock = manualClock();
    const sent: string[] = [];
    let hung = 0;
    const hungRead = hanging({ name: 'hung_read', effect: 'read', timeoutMs: 50 }, () => {
      hung += 1;
      wake();
    });
    let aborted: unknown;
    // Takes effect, then hangs.
    const hungWrite = hanging(
      {
        name: 'hung_write',
        effect: 'write',
        timeoutMs: 50,
        reconcile: async (_args, context) => (sent.includes(context.idempotencyKey) ? { found: true, result: { reconciled: true } } : { found: false }),
      },
      (context) => {
        sent.push(context.idempotencyKey);
        context.signal!.addEventListener('abort', () => (aborted = context.signal!.reason));
        hung += 1;
        wake();
      },
    );
    const seen: ToolResultBlock[][] = [];
    const current = await start(scriptedAgent([hungRead, hungWrite], [() => calls(use('t1', 'hung_read', {}), use('t2', 'hung_write', {})), () => finish()], seen), { clock });
    let settling = 0;
    current.engine.on((event) => {
      if (event.type === 'TaskFailed' && event.taskFailedEventDetails?.error === 'Agent.SettleWait') settling += 1;
    });
    const running = run(current, 'hung');
    // Both calls of the turn run at once, and hang.
    await waitFor(() => hung === 2);
    clock.advance(49);
    expect(aborted).toBeUndefined();
    clock.advance(1);
    // The timed-out write, released, is claimed again only once its settle time (its timeoutMs) has
    // passed on the clock since: its retry is refused until the test moves the clock past it.
    await waitFor(() => settling > 0);
    expect(sent).toHaveLength(1);
    clock.advance(51);
    const finished = await running;

    expect(finished.output).toMatchObject({ status: 'succeeded' });
    expect(seen[1]!.map(parsed)).toEqual([{ error: 'timeout', message: 'hung_read did not answer within 50 ms (its timeoutMs)' }, { reconciled: true }]);
    expect(sent).toHaveLength(1);
    // The tool's own signal told it why it was cut off.
    expect(aborted).toMatchObject({ name: 'AttemptCut', message: 'hung_write did not answer within 50 ms (its timeoutMs)' });
  });

  it('keeps its claim while it runs past one lease: no second attempt can claim it meanwhile', async () => {
    let finishSend!: () => void;
    let sends = 0;
    const slowWrite = bareTool({
      name: 'slow_write',
      description: 'Takes a while.',
      effect: 'write',
      idempotencyKeys: true,
      execute: async () => {
        sends += 1;
        wake();
        await new Promise<void>((resolve) => (finishSend = resolve));
        return { done: true };
      },
    });
    // The renewals run on the stack's clock: each third of a lease the test moves it renews the claim.
    const clock = manualClock();
    const current = await start(scriptedAgent([slowWrite], [() => calls(use('t1', 'slow_write', {})), () => finish()]), { clock, leaseMs: 90 });
    const running = run(current, 'long-write');
    await waitFor(() => sends > 0);
    const claimed = (await current.ledger.getCall('long-write', 1, 1))!;
    // Past two leases on, a third at a time: each renewal holds the claim a lease past that moment
    // (renewals are ledger writes, which wake this probe).
    for (let third = 1; third <= 7; third++) {
      clock.advance(30);
      const until = clock.now().getTime() + 90;
      await waitFor(async () => Date.parse((await current.ledger.getCall('long-write', 1, 1))!.leaseUntil) === until);
    }
    expect(clock.now().getTime()).toBeGreaterThan(Date.parse(claimed.leaseUntil) + 90);
    // Another attempt is refused: the lease is still live.
    const other = await current.ledger.claimCall({ ...claimed, attempts: 0 }, clock.now());
    expect(other).toMatchObject({ claimed: false, existing: { status: 'in_flight', attempts: 1 } });
    finishSend();
    expect((await running).output).toMatchObject({ status: 'succeeded' });
    expect(sends).toBe(1);
    expect(await current.ledger.getCall('long-write', 1, 1)).toMatchObject({ status: 'completed', outcome: 'ok', attempts: 1 });
  });

  it('is cut off by the wall-clock budget, and the run stops at the limit', async () => {
    // The wall-clock watch runs on the stack's clock: the cut comes as the test moves it past the limit.
    const clock = manualClock();
    let hung = false;
    const hungRead = hanging({ name: 'hung', effect: 'read', timeoutMs: 600_000 }, () => {
      hung = true;
      wake();
    });
    const current = await start(scriptedAgent([hungRead], [() => calls(use('t1', 'hung', {})), () => finish()]), { clock });
    const running = run(current, 'wall', { maxWallSeconds: 60 });
    await waitFor(() => hung);
    // The run's clock passes its limit while the call hangs (with ten minutes of its timeout left),
    // and stands still after: the run ends with no further move.
    clock.advance(60_000);
    const limitPassed = clock.now().getTime();
    const finished = await running;

    expect(finished.output).toMatchObject({ status: 'stopped', reason: 'budget exceeded: wall clock 60 s / 60 s' });
    const record = (await current.ledger.getRun('wall'))!;
    expect(Date.parse(record.finishedAt!)).toBe(limitPassed);
    expect(record.guardEvents).toEqual([expect.objectContaining({ guard: 'wallClock', action: 'stopped' })]);
    // Nothing was recorded for the read cut off: a run extended later asks again.
    expect((await current.ledger.listConversation('wall')).calls).toEqual([]);
  });
});

/**
 * A tool's own timeout ends its attempt, whether or not it listens; what it cannot end is the
 * step's ledger work around it. Here the write that records one run's call never answers (and
 * ignores the abort, as a stuck connection would), on that run's first attempt.
 */
function hungCompletion(runId: string) {
  const state = { hung: false };
  const decorate = (ledger: Ledger): Ledger =>
    new Proxy(ledger, {
      get: (target, method: keyof Ledger) =>
        method !== 'completeCall'
          ? (target[method] as (...args: unknown[]) => unknown).bind(target)
          : (...args: Parameters<Ledger['completeCall']>) => {
              if (args[0].runId !== runId || state.hung) return target.completeCall(...args);
              state.hung = true;
              wake();
              return new Promise<never>(() => undefined);
            },
    });
  return { state, decorate };
}

/** CallTool's function timeout in the definition the stack runs: its Task's, less the margin (infra/agent-state-machine.ts). */
const callToolFunctionTimeoutMs = (current: LocalStack) => taskTimeoutSeconds(current.engine.definition, 'CallTool') * 1000 - TASK_TIMEOUT_MARGIN.toMilliseconds();

describe('an invocation that outlasts its function’s timeout', () => {
  it('is ended by its function’s early timeout (1 s before it, as middy does), on the clock, and the Task is retried with the same key', async () => {
    const clock = manualClock();
    // In order: the CallTool Task's events and the tool's sends.
    const timeline: string[] = [];
    const keys: string[] = [];
    const send = bareTool({
      name: 'send',
      description: 'Sends; the provider answers a key it has seen with its first answer.',
      effect: 'write',
      idempotencyKeys: true,
      execute: async (_args, context) => {
        timeline.push(`sent ${keys.push(context.idempotencyKey)}`);
        return { sent: true };
      },
    });
    const completion = hungCompletion('hung');
    const current = await start(scriptedAgent([send], [() => calls(use('t1', 'send', {})), () => finish()]), { clock, retryDelayMs: 0, decorateLedger: completion.decorate });
    let state = '';
    current.engine.on((event) => {
      if (event.type === 'TaskStateEntered') state = event.stateEnteredEventDetails!.name;
      else if (state === 'CallTool' && /^Task(Scheduled|TimedOut|Failed|Succeeded)$/.test(event.type)) timeline.push(event.type);
    });
    const running = run(current, 'hung');
    await waitFor(() => completion.state.hung);
    // What ends the invocation on AWS: the function's early timeout, before the Task's own could.
    const functionTimeoutMs = callToolFunctionTimeoutMs(current);
    clock.advance(functionTimeoutMs - TIMEOUT_EARLY_MS - 1);
    await new Promise((resolve) => setImmediate(resolve));
    expect(timeline).toEqual(['TaskScheduled', 'sent 1']);
    clock.advance(1);
    const finished = await running;

    expect(finished.output).toMatchObject({ status: 'succeeded' });
    // Failed as Agent.Transient (middy's TimeoutError, classified), which the Task retries.
    const history = current.engine.getExecutionHistory(finished.executionArn);
    expect(summarizeHistory(history)['CallTool']).toMatchObject({ invocations: 2, failures: 1, errors: { 'Agent.Transient': 1 } });
    // After exactly the function's timeout less the early margin on the clock, from the attempt's TaskStarted.
    const failed = history.find((event) => event.type === 'TaskFailed')!;
    const started = history.filter((event) => event.type === 'TaskStarted' && event.id < failed.id).at(-1)!;
    expect(failed.timestamp.getTime() - started.timestamp.getTime()).toBe(functionTimeoutMs - TIMEOUT_EARLY_MS);
    // The retry took the claim over (its lease had run out) and sent the same key again.
    expect(timeline).toEqual(['TaskScheduled', 'sent 1', 'TaskFailed', 'TaskScheduled', 'sent 2', 'TaskSucceeded']);
    expect(keys).toEqual([keys[0], keys[0]]);
  });

  it('ends only itself: another run’s invocation of the same function, in flight meanwhile, is not aborted and completes', async () => {
    const clock = manualClock();
    const sends: string[] = [];
    let otherSignal: AbortSignal | undefined;
    let answerOther!: () => void;
    const otherAnswered = new Promise<void>((resolve) => (answerOther = resolve));
    const send = bareTool({
      name: 'send',
      description: 'Sends; the other run’s send answers only when the test says.',
      effect: 'write',
      idempotencyKeys: true,
      execute: async (_args, context) => {
        sends.push(context.runId);
        if (context.runId === 'other') {
          otherSignal = context.signal;
          wake();
          await otherAnswered;
        }
        return { sent: true };
      },
    });
    const completion = hungCompletion('hung');
    const current = await start(scriptedAgent([send], [() => calls(use('t1', 'send', {})), () => finish()]), { clock, retryDelayMs: 0, decorateLedger: completion.decorate });
    const hung = run(current, 'hung');
    await waitFor(() => completion.state.hung);
    // The other run's call starts 15 s later, and is still running when the first one's early timeout fires.
    clock.advance(15_000);
    const other = run(current, 'other');
    const signal = await waitFor(() => otherSignal);
    clock.advance(callToolFunctionTimeoutMs(current) - TIMEOUT_EARLY_MS - 15_000);
    // The hung invocation failed, and its retry sent again.
    await waitFor(() => sends.filter((runId) => runId === 'hung').length === 2);

    expect(signal.aborted).toBe(false);
    answerOther();
    const [first, second] = await Promise.all([hung, other]);
    expect(first.output).toMatchObject({ status: 'succeeded' });
    expect(first.states['CallTool']).toMatchObject({ invocations: 2, failures: 1, errors: { 'Agent.Transient': 1 } });
    expect(second.output).toMatchObject({ status: 'succeeded' });
    expect(second.states['CallTool']).toMatchObject({ invocations: 1, failures: 0 });
    expect(sends).toEqual(['hung', 'other', 'hung']);
  });
});

describe('a tool that waits longer than the default', () => {
  const slow = bareTool({ name: 'slow', description: 'Takes up to two minutes.', effect: 'read', timeoutMs: 120_000, execute: async () => ({ done: true }) });

  it('runs on the CallTool timeouts its deployer sets on AWS (toolTimeout: maxToolTimeoutMs(agent)): the function 10 s longer, its Task 15 s more', async () => {
    const current = await start(scriptedAgent([lookup, slow], [() => calls(use('t1', 'slow', {})), () => finish()]));
    expect(taskTimeoutSeconds(current.engine.definition, 'CallTool')).toBe(120 + 10 + 15);
    expect((await run(current, 'slow')).output).toMatchObject({ status: 'succeeded' });
  });

  it('fails at start on a template whose toolTimeout it outlasts, naming both, as its functions’ cold starts fail on AWS', async () => {
    const template = (await cachedTemplate('stops')) as CfnTemplateJson;
    await expect(start(scriptedAgent([lookup, slow], []), { template })).rejects.toThrow(
      "agent stops: tool slow may take 120000 ms (maxToolTimeoutMs), longer than the stack's toolTimeout of 20000 ms: set toolTimeout: Duration.millis(120000) on its DurableAgent",
    );
  });

  it('is refused at deploy onto a stack whose template it outlasts, and the stack runs on', async () => {
    const current = await start(scriptedAgent([lookup], [() => finish()]));
    expect(() => current.deploy(scriptedAgent([lookup, slow], []), { codeVersion: 'v2' })).toThrow('tool slow may take 120000 ms');
    expect((await run(current, 'after')).output).toMatchObject({ status: 'succeeded' });
  });
});

describe('a hung model call', () => {
  it('is cut off by the wall-clock budget, and the run stops at the limit', async () => {
    const clock = manualClock();
    // A model endpoint that takes the request and never answers.
    let pending = 0;
    const server = createServer(() => {
      pending += 1;
      wake();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const current = await start(scriptedAgent([lookup], []), { clock, modelUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
      const running = run(current, 'wall-model', { maxWallSeconds: 60 });
      await waitFor(() => pending > 0);
      clock.advance(60_000);
      const limitPassed = clock.now().getTime();
      const finished = await running;
      expect(finished.output).toMatchObject({ status: 'stopped', reason: 'budget exceeded: wall clock 60 s / 60 s' });
      expect(Date.parse((await current.ledger.getRun('wall-model'))!.finishedAt!)).toBe(limitPassed);
      expect(pending).toBe(1);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });
});

describe('the loop detector', () => {
  it('catches a model cycling through 8 different calls, warning it first', async () => {
    const step = defineTool({ name: 'step', description: 'Takes a step.', input: z.object({ n: z.number().int() }), effect: 'read', execute: async ({ n }) => ({ n }) });
    const notes: string[] = [];
    // Forever: step 0, 1, …, 7, 0, 1, … — each call different from the last seven.
    const forever = Array.from({ length: 40 }, (_, index) => (_results: ToolResultBlock[], said: string) => {
      notes.push(said);
      return calls(use(`t${index + 1}`, 'step', { n: index % 8 }));
    });
    const current = await start(scriptedAgent([step], forever));
    const finished = await run(current, 'cycle');

    expect(finished.output).toMatchObject({ status: 'stopped', reason: 'loop detected: a cycle of 8 turns repeated 3 times (step → step → step → step → step → step → step → step)' });
    const record = (await current.ledger.getRun('cycle'))!;
    expect(record.modelTurns).toBe(24);
    // Warned in its next turn once two rounds were seen, before the trip.
    expect(notes.findIndex((said) => said.includes('[harness] Warning: your last turns repeat in a cycle of 8'))).toBe(16);
    expect(record.guardEvents!.map((event) => `${event.guard} ${event.action}`)).toEqual(['loop warned', 'loop stopped']);
  });

  it('pauses for a person when the agent asks to, and the run goes on once the person lets it continue', async () => {
    const notes: string[] = [];
    // The same lookup five times (a trip), then — let go on — something else, and done.
    const script = [
      ...Array.from({ length: 5 }, (_, index) => (_results: ToolResultBlock[], said: string) => (notes.push(said), calls(use(`t${index + 1}`, 'lookup', { id: 'same' })))),
      (_results: ToolResultBlock[], said: string) => (notes.push(said), calls(use('t6', 'lookup', { id: 'other' }))),
      () => finish(),
    ];
    const base = scriptedAgent([lookup], script);
    const asked: ApprovalRecord[] = [];
    const current = await start(defineAgent({ ...base, loops: { onLoop: 'ask' } }), {
      onApproval: (approval) => {
        asked.push(approval);
        wake();
      },
    });
    const running = run(current, 'paused');
    await waitFor(() => asked.length > 0);
    expect(asked[0]).toMatchObject({ summary: 'let run paused go on after its loop detector tripped at turn 5 (extension 1)', budget: { guard: 'loop', extension: 1, limit: 5 } });
    expect(await postDecision(current, asked[0]!.approvalId, { decision: 'approve', reason: 'it is waiting for a slow index' })).toMatchObject({ status: 200 });
    const finished = await running;

    expect(finished.output).toMatchObject({ status: 'succeeded', reason: 'done' });
    expect(finished.states['RequestBudgetExtension']).toMatchObject({ entered: 1, failures: 0 });
    const record = (await current.ledger.getRun('paused'))!;
    expect(record).toMatchObject({ modelTurns: 7, loopAllowedThrough: 5, budgetExtensions: { loop: 1 } });
    // Warned first (in turns 4 and 5), then tripped: the pause recorded like a budget extension.
    expect(notes.slice(3, 5).every((said) => said.includes('[harness] Warning: you called lookup {"id":"same"}'))).toBe(true);
    expect(record.guardEvents!.map((event) => `${event.guard} ${event.action}`)).toEqual(['loop warned', 'loop warned', 'loop tripped']);
  });

  it('catches turns that make no progress: the same text again and again, without a tool call', async () => {
    const current = await start(scriptedAgent([lookup], Array.from({ length: 20 }, () => () => ({ content: [{ type: 'text', text: 'I will look into it.' }], stop_reason: 'max_tokens' }))));
    const finished = await run(current, 'no-progress');
    expect(finished.output).toMatchObject({ status: 'stopped', reason: 'loop detected: the same text without a tool call: "I will look into it." repeated 5 times in the last 5 turns' });
    expect((await current.ledger.getRun('no-progress'))!.modelTurns).toBe(5);
  });
});

describe("the model's final answer", () => {
  it('ends the run in the invocation that records it: Finalize next, with no empty Map and no CallModel after it', async () => {
    const current = await start(scriptedAgent([lookup], [() => calls(use('t1', 'lookup', { id: 'a' })), () => finish()]));
    const finished = await run(current, 'final');
    expect(finished.output).toMatchObject({ status: 'succeeded', reason: 'done' });
    expect(finished.states['CallModel']).toMatchObject({ entered: 2, invocations: 2 });
    expect(finished.states['ToolCalls']).toMatchObject({ entered: 1 });
    expect(finished.states['CallTool']).toMatchObject({ entered: 1 });
    expect(finished.states['Finalize']).toMatchObject({ entered: 1 });
    expect(await current.ledger.getRun('final')).toMatchObject({ modelTurns: 2, toolCalls: 1, steps: 3, status: 'succeeded' });
  });

  it('is decided on as the next decision would be: a final answer that spent the last step stops the run on the step budget', async () => {
    const current = await start(scriptedAgent([lookup], [() => calls(use('t1', 'lookup', { id: 'a' })), () => finish()]));
    const finished = await run(current, 'last-step', { maxSteps: 3 });
    expect(finished.output).toMatchObject({ status: 'stopped', reason: expect.stringMatching(/^budget exceeded: steps 3 \/ 3/) });
    expect(finished.states['CallModel']).toMatchObject({ entered: 2 });
    expect(finished.states['ToolCalls']).toMatchObject({ entered: 1 });
    expect(await current.ledger.getRun('last-step')).toMatchObject({ modelTurns: 2, steps: 3, status: 'stopped' });
  });
});

describe('a result that would blow the budget', () => {
  const MB = 1024 * 1024;
  const document = (bytes: number) => ({ text: 'x'.repeat(bytes) });

  it('is never sent to the model when the call carrying it might not fit: no token or dollar overshoot', async () => {
    // Two results of one turn, each of which the next call could carry alone (one that could not is
    // answered to the model as too large: test/engine/large-result.test.ts), together 1.6 MB.
    const fetchAll = bareTool({ name: 'fetch_all', description: 'Returns everything.', effect: 'read', execute: async () => document(400_000) });
    const seen: ToolResultBlock[][] = [];
    const current = await start(scriptedAgent([fetchAll], [() => calls(use('t1', 'fetch_all', {}), use('t2', 'fetch_all', {})), () => finish()], seen));
    const finished = await run(current, 'huge', { maxTokens: 600_000, maxDollars: 2 });

    expect(finished.output).toMatchObject({ status: 'stopped', reason: expect.stringMatching(/^budget exceeded: tokens \d+ \/ 600000, and the next model call may use up to 80\d{4} \(raise the run's maxTokens, or give tools with large results a maxResultTokens\)$/) });
    // The model was asked once: the call that would have carried 3 MB was never sent.
    expect(seen).toHaveLength(1);
    const record = (await current.ledger.getRun('huge'))!;
    expect(record.inputTokens + record.outputTokens).toBeLessThanOrEqual(600_000);
    expect(record.costMicros).toBeLessThanOrEqual(2_000_000);
    expect(record.guardEvents).toEqual([expect.objectContaining({ guard: 'tokens', action: 'stopped' })]);
  });

  it('asks a person to extend the budget instead, when the run is set to ask', async () => {
    const fetchAll = bareTool({ name: 'fetch_all', description: 'Returns everything.', effect: 'read', execute: async () => document(400_000) });
    const asked: ApprovalRecord[] = [];
    const current = await start(scriptedAgent([fetchAll], [() => calls(use('t1', 'fetch_all', {}), use('t2', 'fetch_all', {})), () => finish()]), {
      onApproval: (approval) => {
        asked.push(approval);
        wake();
      },
    });
    const running = run(current, 'huge-ask', { maxTokens: 600_000, onBudgetExceeded: 'ask' });
    await waitFor(() => asked.length > 0);
    expect(asked.map((approval) => approval.summary)).toEqual(['extend the tokens budget of run huge-ask from 600000 to 900000 (extension 1)']);
    expect(await postDecision(current, asked[0]!.approvalId, { decision: 'reject', reason: 'too big' })).toMatchObject({ status: 200 });
    expect((await running).output).toMatchObject({ status: 'stopped', reason: expect.stringMatching(/^budget exceeded: tokens .*\(extension rejected: too big\)$/) });
  });

  it('is reserved in the ledger before the call goes out, and settled to the real usage in the write that counts the turn', async () => {
    // A model endpoint that answers when the test lets it: the reservation is looked at meanwhile.
    const held: (() => void)[] = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        held.push(() =>
          response.writeHead(200, { 'content-type': 'application/json' }).end(
            JSON.stringify({ id: 'msg_1', type: 'message', role: 'assistant', model: 'savepoint-sim-1', content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn', usage: { input_tokens: 1_200, output_tokens: 30 } }),
          ),
        );
        wake();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const agent = scriptedAgent([lookup], []);
      const current = await start(agent, { modelUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
      const running = run(current, 'reserved');
      await waitFor(() => held.length > 0);
      const during = (await current.ledger.getRun('reserved'))!;
      const reservation = nextCallReservation(agent, during, [], []);
      expect(during).toMatchObject({ reservedTokens: reservation.tokens, reservedMicros: reservation.micros, inputTokens: 0, costMicros: 0 });
      held[0]!();
      expect((await running).output).toMatchObject({ status: 'succeeded' });
      const after = (await current.ledger.getRun('reserved'))!;
      expect(after).toMatchObject({ reservedTokens: 0, reservedMicros: 0, inputTokens: 1_200, outputTokens: 30 });
      expect(after.costMicros).toBeGreaterThan(0);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('is never sent to be summarised either: a compaction that might not fit is not sent, no token or dollar overshoot', async () => {
    const fetchAll = bareTool({ name: 'fetch_all', description: 'Returns everything.', effect: 'read', execute: async () => document(400_000) });
    // A model endpoint with a tokenizer at its worst (one token per byte of the request, the bound
    // the reservation assumes): fetch_all, then a lookup, then done; a compaction is answered with a summary.
    const requests: string[] = [];
    const server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk) => (body += chunk));
      request.on('end', () => {
        requests.push(body);
        const sent = JSON.parse(body) as MessageRequest;
        const turn = sent.messages.filter((message) => message.role === 'assistant').length;
        const answer = body.includes('Context compaction') ? finish('The summary.') : [calls(use('t1', 'fetch_all', {})), calls(use('t2', 'lookup', { id: '1' })), finish()][turn]!;
        response
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ id: `msg_${requests.length}`, type: 'message', role: 'assistant', model: 'savepoint-sim-1', ...answer, usage: { input_tokens: Buffer.byteLength(body), output_tokens: 20 } }));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      // Turn 2 reads the 400 kB result (400k tokens: past 3/4 of the window), so turn 1 and its
      // result are compacted before turn 3: a call as big as turn 2's, which no longer fits.
      const agent = defineAgent({ ...scriptedAgent([fetchAll, lookup], []), contextWindow: 500_000, compaction: { keepRecentTurns: 1 } });
      const current = await start(agent, { modelUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, maxBudgets: { maxTokens: 700_000 } });
      const finished = await run(current, 'huge-compaction', { maxTokens: 700_000, maxDollars: 2.5 });

      expect(finished.output).toMatchObject({ status: 'stopped', reason: expect.stringMatching(/^budget exceeded: tokens 40\d{4} \/ 700000, and the next model call may use up to 40\d{4} \(raise the run's maxTokens, or give tools with large results a maxResultTokens\)$/) });
      // Two model calls: the compaction that would have carried 400 kB again was never sent.
      expect(requests).toHaveLength(2);
      expect(finished.states['Compact']).toBeUndefined();
      const record = (await current.ledger.getRun('huge-compaction'))!;
      expect(record.inputTokens + record.outputTokens).toBeLessThanOrEqual(700_000);
      expect(record.costMicros).toBeLessThanOrEqual(2_500_000);
      expect(record).toMatchObject({ modelTurns: 2, reservedTokens: 0, reservedMicros: 0 });
      expect(record.guardEvents).toEqual([expect.objectContaining({ guard: 'tokens', action: 'stopped' })]);
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('is cut for the model by the tool\'s maxResultTokens, the whole of it stored by reference', async () => {
    const fetchAll = bareTool({ name: 'fetch_all', description: 'Returns everything.', effect: 'read', maxResultTokens: 4_000, execute: async () => document(3 * MB) });
    const seen: ToolResultBlock[][] = [];
    const current = await start(scriptedAgent([fetchAll], [() => calls(use('t1', 'fetch_all', {})), () => finish()], seen));
    const finished = await run(current, 'cut', { maxTokens: 600_000, maxDollars: 2 });

    expect(finished.output).toMatchObject({ status: 'succeeded' });
    const shown = String(seen[1]![0]!.content);
    expect(Buffer.byteLength(shown)).toBeLessThanOrEqual(4_000);
    const cut = JSON.parse(shown) as { truncated: boolean; bytes: number; head: string; stored: string };
    const whole = JSON.stringify(document(3 * MB));
    expect(cut).toMatchObject({ truncated: true, bytes: Buffer.byteLength(whole) });
    expect(whole.startsWith(cut.head)).toBe(true);
    expect(await readResult(current.ledger, 'cut', parseBlobRef(cut.stored)!)).toBe(whole);
  });
});
