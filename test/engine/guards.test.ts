import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BREAKER } from '../../lambdas/guards/breaker.js';
import { toolsBreaker } from '../../lambdas/guards/breaker.js';
import { loadReport } from '../../lambdas/runs/report.js';
import { summarizeHistory } from '../../local/engine/local-engine.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';
import { postDecision, waitFor } from '../support/agent-harness.js';
import { expiringApprovals, manualClock } from '../support/manual-clock.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

const runDate = sampleDay.date;
const quickApprovals = { approvalTimeoutSeconds: 1 };

describe('budgets', () => {
  it.each([
    ['steps', { maxSteps: 12 }, /^budget exceeded: steps 12 \/ 12$/],
    // Tokens and dollars: the next model call is reserved at its most before it is sent, and not sent when it does not fit.
    ['tokens', { maxTokens: 20_000 }, /^budget exceeded: tokens (\d+) \/ 20000, and the next model call may use up to (\d+) \(raise the run's maxTokens, or give tools with large results a maxResultTokens\)$/],
    ['dollars', { maxDollars: 0.05 }, /^budget exceeded: dollars 0\.0\d+ \/ 0\.05, and the next model call may cost up to (0\.\d+) \(raise the run's maxDollars, or give tools with large results a maxResultTokens\)$/],
  ])('stops the run on the %s budget, naming the budget and the figures', async (guard, config, reason) => {
    harness = await startHarness(expiringApprovals());
    const finished = await harness.run({ runId: `budget-${guard}`, input: { date: runDate }, config: { ...config, ...quickApprovals } });
    expect(finished.status).toBe('SUCCEEDED');
    const output = JSON.parse(finished.output!) as { status: string; reason: string };
    expect(output.status).toBe('stopped');
    expect(output.reason).toMatch(reason);
    const report = (await loadReport(harness.stack.ledger, `budget-${guard}`, new Date(), refundReconciler))!;
    expect(report.stopReason).toBe(output.reason);
    expect(report.guardEvents).toEqual([expect.objectContaining({ guard, action: 'stopped', reason: output.reason })]);
    if (guard === 'steps') expect(report.steps).toBe(12); // stopped before the call that would exceed it
    if (guard === 'tokens') {
      const [, used, reserved] = reason.exec(output.reason)!.map(Number);
      expect(report.tokens.total).toBe(used);
      // Never over: stopped because the next call might have crossed the limit.
      expect(used).toBeLessThanOrEqual(20_000);
      expect(used! + reserved!).toBeGreaterThan(20_000);
    }
    if (guard === 'dollars') expect(report.dollars).toBeLessThanOrEqual(0.05);
    expect(report.inFlight).toBe(0);
  });

  it('stops on the wall clock since the run first started', async () => {
    const clock = manualClock();
    harness = await startHarness({ clock });
    const stack = harness.stack;
    const running = harness.run({ runId: 'wall', input: { date: runDate }, config: { maxWallSeconds: 3600, ...quickApprovals } });
    await waitFor(async () => ((await stack.ledger.getRun('wall'))?.steps ?? 0) >= 10);
    clock.advance(2 * 3600 * 1000);
    const finished = await running;
    const output = JSON.parse(finished.output!) as { status: string; reason: string };
    expect(output.status).toBe('stopped');
    expect(output.reason).toMatch(/^budget exceeded: wall clock 7200 s \/ 3600 s$/);
  });

  it('offers the remaining budget to the model each turn in the latest user turn, while the system prompt stays the same bytes', async () => {
    const systems: string[] = [];
    const maxTokens: number[] = [];
    const hints: string[] = [];
    const model = await recordingModel(systems, maxTokens, hints);
    try {
      harness = await startHarness({ modelUrl: model.url, ...expiringApprovals() });
      await harness.run({ runId: 'hint', input: { date: runDate }, config: { maxSteps: 6, maxTokensPerTurn: 700, ...quickApprovals } });
      expect(new Set(maxTokens)).toEqual(new Set([700])); // max_tokens per turn, on every call
      expect(hints[0]).toMatch(/^\[harness\] Budget left for this run: 6 steps, \d+ tokens, \$5\.00, 240 min/); // no time passes on the test clock before the first call
      expect(hints.at(-1)).toMatch(/Budget left for this run: [1-5] steps/);
      // Per-turn content never reaches the system prompt: a provider's prompt cache keeps matching it.
      expect(new Set(systems).size).toBe(1);
      expect(systems[0]).not.toContain('[harness]');
      expect((await harness.stack.ledger.getRun('hint'))!.steps).toBe(6);
    } finally {
      model.server.close();
    }
  });
});

describe('the kill switch', () => {
  it('stops a run before its next step, saying who killed it and when', async () => {
    harness = await startHarness(expiringApprovals());
    const { stack } = harness;
    const running = harness.run({ runId: 'to-kill', input: { date: runDate }, config: quickApprovals });
    await waitFor(async () => ((await stack.ledger.getRun('to-kill'))?.steps ?? 0) >= 10);
    const flag = { by: 'alice', at: new Date().toISOString(), reason: 'wrong day' };
    await stack.ledger.killRun('to-kill', flag);
    const stepsAtKill = (await stack.ledger.getRun('to-kill'))!.steps;
    const finished = await running;

    expect(JSON.parse(finished.output!)).toMatchObject({ status: 'killed', reason: `killed by alice at ${flag.at}: wrong day` });
    const run = (await stack.ledger.getRun('to-kill'))!;
    expect(run).toMatchObject({ status: 'killed', killed: flag });
    // At most the step that was already running when the flag was set completes (and is recorded).
    expect(run.steps - stepsAtKill).toBeLessThanOrEqual(1);
    expect((await loadReport(stack.ledger, 'to-kill', new Date(), refundReconciler))!.inFlight).toBe(0);
  });

  it('stops every run while the global kill switch is on', async () => {
    harness = await startHarness();
    await harness.stack.ledger.setGlobalKill({ by: 'ops', at: '2026-11-29T03:00:00.000Z', reason: 'incident' });
    const finished = await harness.run({ runId: 'global', input: { date: runDate } });
    expect(JSON.parse(finished.output!)).toMatchObject({ status: 'killed', reason: 'killed (all runs) by ops at 2026-11-29T03:00:00.000Z: incident' });
    // CallModel's decision stopped it before any model call: entered once, no turn.
    expect(finished.states['CallModel']).toMatchObject({ entered: 1 });
    expect(await harness.stack.ledger.getRun('global')).toMatchObject({ status: 'killed', modelTurns: 0, steps: 0 });
  });

  it('treats StopExecution as a kill, recorded on the run', async () => {
    harness = await startHarness(expiringApprovals());
    const { stack } = harness;
    const { executionArn } = stack.engine.startExecution({ name: 'stopped', input: { runId: 'stopped', input: { date: runDate }, config: quickApprovals } });
    await waitFor(async () => ((await stack.ledger.getRun('stopped'))?.steps ?? 0) >= 5);
    await stack.engine.stopExecution(executionArn, { error: 'Operator.Stop', cause: 'wrong day selected' });
    const run = await waitFor(async () => {
      const current = await stack.ledger.getRun('stopped');
      return current?.status === 'killed' ? current : undefined;
    });
    expect(run.killed).toMatchObject({ by: 'StopExecution', reason: 'Operator.Stop: wrong day selected' });
    expect(run.stopReason).toMatch(/^killed by StopExecution at .*: Operator\.Stop: wrong day selected$/);
  });
});

describe('the circuit breaker', () => {
  it('opens when the provider fails, stops calling it, and lets runs continue once it recovers', async () => {
    const { clock, onAsked } = expiringApprovals();
    harness = await startHarness({ clock, onAsked, breaker: BREAKER, breakerRetryDelayMs: 100 });
    const { stack } = harness;
    const running = harness.run({ runId: 'outage', input: { date: runDate }, config: quickApprovals });
    await waitFor(async () => ((await stack.ledger.getRun('outage'))?.toolCalls ?? 0) >= 5);

    stack.world.payments.setOutage(true);
    const opened = await waitFor(async () => {
      const state = await stack.ledger.getBreaker(toolsBreaker(refundReconciler));
      return state?.state === 'open' ? state : undefined;
    });
    expect(opened.lastTrip!.reason).toMatch(/^5 failures in 60 s, last: Agent\.Transient/);
    // While open, the provider is not called: its request count stands still while CallTool is
    // refused again and again (counted in the execution's history, not waited for on a clock).
    const requestsWhenOpen = stack.world.payments.requestCount();
    const refusals = () => {
      const [execution] = stack.engine.listExecutions().executions;
      return summarizeHistory(stack.engine.getExecutionHistory(execution!.executionArn))['CallTool']?.errors['Agent.CircuitOpen'] ?? 0;
    };
    const refusedBefore = refusals();
    await waitFor(() => refusals() >= refusedBefore + 3);
    expect(stack.world.payments.requestCount()).toBe(requestsWhenOpen);

    // The provider recovers; after the cooldown one probe goes through and closes the breaker.
    stack.world.payments.setOutage(false);
    clock.advance(BREAKER.openMs + 1_000);
    const finished = await running;
    expect(finished.status).toBe('SUCCEEDED');
    expect(JSON.parse(finished.output!)).toMatchObject({ status: 'succeeded' });
    expect(await stack.ledger.getBreaker(toolsBreaker(refundReconciler))).toMatchObject({ state: 'closed', trips: 1 });
    expect(finished.states['CallTool']!.errors['Agent.CircuitOpen']).toBeGreaterThan(0);
  });
});

describe('loop detection', () => {
  it('stops the retry spiral — a malformed tool response and a model repeating the same call — for under a dollar', async () => {
    const provider = await garbledProvider();
    const model = await stubbornModel();
    try {
      harness = await startHarness({ modelUrl: model.url, agentEnv: { PAYMENTS_API_URL: provider.url } });
      const finished = await harness.run({ runId: 'spiral', input: { date: runDate } });
      const output = JSON.parse(finished.output!) as { status: string; reason: string; dollars: number };
      expect(output.status).toBe('stopped');
      expect(output.reason).toBe('loop detected: get_order {"orderId":"ord_001"} repeated 5 times in the last 5 turns');
      expect(output.dollars).toBeLessThan(1);
      const report = (await loadReport(harness.stack.ledger, 'spiral', new Date(), refundReconciler))!;
      expect(report.modelTurns).toBe(5); // stopped within the window: the 5th identical call was the last
      expect(report.guardEvents.map((event) => [event.guard, event.action])).toEqual([
        ['loop', 'warned'],
        ['loop', 'warned'],
        ['loop', 'stopped'],
      ]);
    } finally {
      provider.server.close();
      model.server.close();
    }
  });
});

describe('counters survive a restart', () => {
  it('resumes a run on a new engine without resetting steps, tokens, dollars or the wall clock', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-resume-'));
    try {
      const firstClock = expiringApprovals();
      harness = await startHarness({ stateDir, ...firstClock });
      const first = harness.stack;
      first.engine.startExecution({ name: 'first', input: { runId: 'resumed', input: { date: runDate }, config: quickApprovals } });
      await waitFor(async () => ((await first.ledger.getRun('resumed'))?.steps ?? 0) >= 20);
      await first.close(); // the engine stops mid-run; closing waits for the steps in flight
      harness = undefined;
      // The new engine starts where the first one's clock stopped, as a restarted process does.
      const before = (await (harness = await startHarness({ stateDir, ...expiringApprovals({ clock: manualClock(firstClock.clock.now().getTime()) }) })).stack.ledger.getRun('resumed'))!;

      const finished = await harness.run({ runId: 'resumed', input: { date: runDate }, config: quickApprovals }, 'second');
      expect(finished.status, finished.cause).toBe('SUCCEEDED');
      const after = (await harness.stack.ledger.getRun('resumed'))!;
      expect(after.status).toBe('succeeded');
      expect(after.createdAt).toBe(before.createdAt);
      expect(after.executions).toHaveLength(2);
      for (const counter of ['steps', 'inputTokens', 'outputTokens', 'costMicros'] as const) expect(after[counter]).toBeGreaterThan(before[counter]);
      // Nothing was repeated: the same 105 steps as an uninterrupted run, each refund paid once.
      expect(after.steps).toBe(105);
      const paid = harness.stack.world.payments.refunds().map((refund) => refund.refundRequestId);
      expect(new Set(paid).size).toBe(paid.length);
    } finally {
      // Closed before its state directory goes: the ledger brings its index up to date on close.
      await harness?.stack.close();
      harness = undefined;
      rmSync(stateDir, { recursive: true, force: true });
    }
  });
});

/** A model that records each request's system prompt and answers with the simulated policy's first moves. */
async function recordingModel(systems: string[], maxTokens: number[], hints: string[]) {
  return stubServer((_path, body) => {
    const request = JSON.parse(body) as { system: unknown; messages: { content: { type: string; text?: string }[] }[]; max_tokens: number };
    systems.push(JSON.stringify(request.system));
    maxTokens.push(request.max_tokens);
    // The harness's notes: the last block of the latest user turn.
    hints.push(request.messages.at(-1)?.content.at(-1)?.text ?? '');
    const turn = request.messages.length;
    return message(turn, [{ type: 'tool_use', id: `toolu_${turn}`, name: 'list_refund_requests', input: { date: runDate } }]);
  });
}

/** The model of the opening story: it retries get_order with identical arguments, forever. */
async function stubbornModel() {
  return stubServer((_path, body) => {
    const turn = (JSON.parse(body) as { messages: unknown[] }).messages.length;
    return message(turn, [{ type: 'tool_use', id: `toolu_${turn}`, name: 'get_order', input: { orderId: 'ord_001' } }]);
  });
}

/** A provider whose order lookups come back malformed. */
async function garbledProvider() {
  return stubServer(() => ({ id: 'ord_001', total: 'about ten dollars' }));
}

function message(turn: number, content: unknown[]) {
  return { id: `msg_${turn}`, type: 'message', role: 'assistant', model: 'savepoint-sim-1', content, stop_reason: 'tool_use', usage: { input_tokens: 2_000, output_tokens: 50 } };
}

async function stubServer(answer: (path: string, body: string) => unknown): Promise<{ url: string; server: Server }> {
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answer(request.url ?? '/', body))));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('budget extensions', () => {
  it('asks a person to extend an exhausted budget, applies an approved extension once, and stops when refused', async () => {
    // The person decides the extensions; any other approval expires at its deadline, on the clock.
    harness = await startHarness(expiringApprovals({ expires: (approval) => !approval.budget }));
    const { stack } = harness;
    const decisions = (async () => {
      const first = await waitFor(() => harness!.approvals.find((approval) => approval.budget?.extension === 1));
      expect(first.summary).toBe('extend the steps budget of run extend from 12 to 18 (extension 1)');
      expect(await postDecision(stack, first.approvalId, { decision: 'approve' })).toMatchObject({ status: 200 });
      const second = await waitFor(() => harness!.approvals.find((approval) => approval.budget?.extension === 2));
      expect(await postDecision(stack, second.approvalId, { decision: 'reject', reason: 'enough for today' })).toMatchObject({ status: 200 });
    })();
    const finished = await harness.run({ runId: 'extend', input: { date: runDate }, config: { maxSteps: 12, onBudgetExceeded: 'ask', ...quickApprovals } });
    await decisions;

    expect(JSON.parse(finished.output!)).toMatchObject({ status: 'stopped', reason: 'budget exceeded: steps 18 / 18 (extension rejected: enough for today)' });
    const run = (await stack.ledger.getRun('extend'))!;
    expect(run).toMatchObject({ steps: 18, config: { maxSteps: 18 }, budgetExtensions: { steps: 1 } });
    expect(finished.states['RequestBudgetExtension']).toMatchObject({ entered: 2, failures: 1, errors: { 'Approval.Rejected': 1 } });
    const report = (await loadReport(stack.ledger, 'extend', new Date(), refundReconciler))!;
    expect(report.guardEvents.map((event) => [event.guard, event.action])).toEqual([
      ['steps', 'tripped'],
      ['steps', 'tripped'],
      ['steps', 'stopped'],
    ]);
  });
});
