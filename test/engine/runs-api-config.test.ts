import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiGatewayEvent } from '../../local/services/approval-api.js';
import { lambdaContext } from '../../local/services/lambda-context.js';
import { counterAgent } from '../support/counter-agent.js';
import { startAgentHarness, waitFor, type AgentHarness } from '../support/agent-harness.js';

/**
 * `POST /v1/runs` passes StartRun the settings the caller named and nothing else: the agent's own
 * budgets stand for the rest, not RunConfig's defaults that parsing the request fills in (which
 * would cut an agent with a larger budget down to the defaults, or refuse one with a smaller).
 */
let h: AgentHarness<any>;
beforeAll(async () => {
  h = await startAgentHarness({ agent: counterAgent({ calls: 1, perTurn: 1 }), recovery: false });
}, 60_000);
afterAll(() => h?.stack.close());

describe('the runs API and the settings of a run', () => {
  it('records the settings the caller named over the budgets of the agent, not the defaults', async () => {
    const body = { input: { id: 'settings' }, runId: 'named-settings', config: { approvalTimeoutSeconds: 60 } };
    const answer = await h.stack.runsApi(apiGatewayEvent({ method: 'POST', route: 'runs', body: JSON.stringify(body), principal: 'local:tester' }), lambdaContext('RunsApi', 20_000));
    expect(answer.statusCode).toBe(202);
    const run = await waitFor(() => h.stack.ledger.getRun('named-settings'));
    // The counter agent's budget (1,000,000 steps), not RunConfig's default of 400.
    expect(run.config).toMatchObject({ approvalTimeoutSeconds: 60, maxSteps: 1_000_000 });
  });
});
