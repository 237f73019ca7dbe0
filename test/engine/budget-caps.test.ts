import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../support/agent-harness.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * Budgets the deployment caps (issue 36 item 3): a run's starter set its own budgets —
 * `POST /v1/runs` with `"config":{"maxDollars":10000,"maxSteps":1000000}` was accepted with those
 * limits (the agent's are $5 and 400). Now a start that asks for more than the agent and the
 * deployment allow is refused before anything starts, naming the budget, on every start path.
 */
let harness: Harness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

const request = (runId: string, config: Record<string, unknown>) => ({ runId, input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600, ...config } });

describe('a run request above its budget ceilings', () => {
  it('is refused 400 by the runs API, naming each budget, and nothing starts', async () => {
    harness = await startHarness();
    await expect(harness.startAs('alice@example.com', request('greedy', { maxDollars: 10_000, maxSteps: 1_000_000 }))).rejects.toThrow(
      /^runs API answered 400: .*config\.maxSteps: 1000000 is above the most a run of this agent may ask for \(400;.*config\.maxDollars: 10000 is above the most a run of this agent may ask for \(5;/,
    );
    expect(await harness.stack.ledger.getRun('greedy')).toBeUndefined();
    expect(harness.stack.engine.listExecutions().executions.filter((execution) => execution.name.startsWith('greedy'))).toEqual([]);
  });

  it('fails its execution at StartRun when started past the runs API (plain StartExecution), writing no run', async () => {
    harness = await startHarness();
    const finished = await harness.run(request('direct', { maxDollars: 10_000 }));
    expect(finished).toMatchObject({ status: 'FAILED', error: 'Agent.InvalidInput', cause: expect.stringContaining('config.maxDollars: 10000 is above the most a run of this agent may ask for (5;') });
    expect(await harness.stack.ledger.getRun('direct')).toBeUndefined();
  });

  it('runs with what it asked for when it stays within them: lower than the agent’s, or up to what the deployment allows', async () => {
    harness = await startHarness({ maxBudgets: { maxDollars: 20 } });
    // Started, not waited for (its refunds wait for people): the run record shows what it was given.
    void harness.startAs('alice@example.com', request('modest', { maxSteps: 300, maxDollars: 20 })).catch(() => undefined);
    expect((await waitFor(() => harness!.stack.ledger.getRun('modest'))).config).toMatchObject({ maxSteps: 300, maxDollars: 20 });
    await expect(harness.startAs('alice@example.com', request('past-deployment', { maxDollars: 20.01 }))).rejects.toThrow(/config\.maxDollars: 20\.01 is above the most a run of this agent may ask for \(20;/);
  });

  it('runs within the deployment’s ceilings when it asks for nothing, though the agent’s own budgets are higher', async () => {
    // A deployment that caps runs below the agent's own budgets ($5, 400 steps): the construct
    // refuses it at synth only when given the agent, so the start path must hold it too.
    harness = await startHarness({ maxBudgets: { maxDollars: 2, maxSteps: 100 } });
    void harness.startAs('alice@example.com', request('capped', {})).catch(() => undefined);
    expect((await waitFor(() => harness!.stack.ledger.getRun('capped'))).config).toMatchObject({ maxSteps: 100, maxDollars: 2, maxTokens: 600_000 });
    // A budget the request names is still the request's, within the ceiling.
    void harness.startAs('alice@example.com', request('asked', { maxSteps: 50 })).catch(() => undefined);
    expect((await waitFor(() => harness!.stack.ledger.getRun('asked'))).config).toMatchObject({ maxSteps: 50, maxDollars: 2 });
  });
});
