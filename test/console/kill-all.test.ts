import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SavepointClient } from '../../client/ledger-client.js';
import { stackClient } from '../support/agent-harness.js';
import { startLocalConsole } from '../../console/local.js';
import type { ConsoleServer } from '../../console/server.js';
import { duplicatePayments, sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * The console's kill-all, on a run waiting for a person: the switch stops every run before its
 * next step, and a run that takes no next step until its approval is decided is killed now (its
 * approval rejected), as `savepoint kill --all` does (client/kill-all.ts).
 */
let harness: Harness;
let client: SavepointClient;
let console_: ConsoleServer;
const RUN = 'waiting-run';

beforeAll(async () => {
  harness = await startHarness();
  console_ = await startLocalConsole(harness.stack);
  client = stackClient(harness.stack);
}, 120_000);
afterAll(async () => {
  await console_?.close();
  await harness?.stack.close();
});

describe("the console's kill-all", () => {
  it('stops a run waiting for a person now, naming it, and the switch stays on for the others', async () => {
    await client.start({ runId: RUN, input: sampleInput, config: { approvalTimeoutSeconds: 3600 } });
    expect((await client.wait(RUN, { untilInput: true })).lifecycle).toBe('input_required');

    const response = await fetch(`${console_.origin}/api/kill-all`, {
      method: 'POST',
      headers: { 'x-savepoint-token': console_.token, origin: console_.origin, 'content-type': 'application/json' },
      body: JSON.stringify({ on: true, reason: 'incident' }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ok: true, globalKill: true, stopped: [RUN] });

    const ended = await client.wait(RUN);
    expect(ended.report).toMatchObject({ status: 'killed', approvals: { pending: 0, rejected: 1 }, killed: { reason: 'incident' } });
    expect(await harness.stack.ledger.getGlobalKill()).toMatchObject({ reason: 'incident' });
    expect(duplicatePayments(harness.stack)).toEqual([]);
  }, 120_000);
});
