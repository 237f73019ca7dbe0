import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiGatewayEvent } from '../../local/services/approval-api.js';
import { lambdaContext } from '../../local/services/lambda-context.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * `POST /runs` for a model that has no price: refused at once (400, naming the model and how to
 * price it), as StartRun would refuse it — not a 202 and then a failed run. Nothing starts.
 */
describe('the runs API and a model without a price', () => {
  let harness: Harness;
  beforeAll(async () => {
    harness = await startHarness();
  });
  afterAll(() => harness?.stack.close());

  const post = (body: Record<string, unknown>) => harness.stack.runsApi(apiGatewayEvent({ method: 'POST', route: 'runs', body: JSON.stringify(body), principal: 'alice@example.com' }), lambdaContext('RunsApi', 20_000));

  it('answers 400 naming the model, and starts nothing', async () => {
    const answer = await post({ runId: 'unpriced', input: { date: sampleDay.date }, model: 'anthropic:claude-nonesuch-9' });
    expect(answer.statusCode).toBe(400);
    expect(JSON.parse(answer.body)).toEqual({ message: expect.stringMatching(/^model anthropic:claude-nonesuch-9 has no price in price table .*: add its price to the agent/) });
    expect(await harness.stack.ledger.getRun('unpriced')).toBeUndefined();
    expect(harness.stack.engine.listExecutions().executions.some((execution) => execution.name?.startsWith('unpriced'))).toBe(false);
  });

  it('still starts a run on a priced model (202)', async () => {
    const answer = await post({ runId: 'priced', input: { date: sampleDay.date }, model: 'sim:savepoint-sim-1' });
    expect(answer.statusCode).toBe(202);
  });
});
