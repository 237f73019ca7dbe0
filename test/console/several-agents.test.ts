import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalConsole } from '../../console/local.js';
import type { ConsoleServer } from '../../console/server.js';
import type { ExecutionLink } from '../../console/views.js';
import { modelWithOutage } from '../support/model-outage.js';
import { startHarness, type Harness } from '../support/refund-harness.js';
import { keysSentTwice, sampleInput, startTriage, type TriageHarness } from '../support/triage-harness.js';

/**
 * The console of `savepoint serve --agent a --agent b` (console/local.ts with `agents`): an engine
 * and a ledger per agent, read as one. Its resume of a run of the second agent must start that
 * run on the second agent's own engine (its state machine, its code), not on the first's.
 */

let refunds: Harness;
let triage: TriageHarness;
let console_: ConsoleServer;
/** The triage agent's model, down (503) while `model.down`: CallModel exhausts its retries and the run fails. */
let model: Awaited<ReturnType<typeof modelWithOutage>>;
let stateDir: string;

const headers = (extra: Record<string, string> = {}) => ({ 'x-savepoint-token': console_.token, ...extra });
async function get(path: string): Promise<any> {
  const response = await fetch(`${console_.origin}/api/${path}`, { headers: headers() });
  expect(response.status, `GET ${path}`).toBe(200);
  return response.json();
}
async function post(path: string, body: unknown): Promise<{ status: number; body: any }> {
  const response = await fetch(`${console_.origin}/api/${path}`, { method: 'POST', headers: headers({ origin: console_.origin, 'content-type': 'application/json' }), body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

beforeAll(async () => {
  // A model endpoint in front of the triage agent's simulated one, down while `model.down` says so;
  // no automatic recovery, so that an outage leaves a failed run for the console to resume.
  model = await modelWithOutage();
  refunds = await startHarness();
  triage = await startTriage({ modelUrl: model.url, recovery: false, decide: 'approve' });
  model.target = triage.stack.endpoints.model;
  stateDir = mkdtempSync(join(tmpdir(), 'savepoint-console-agents-'));
  console_ = await startLocalConsole(refunds.stack, { agents: [{ stack: triage.stack, stateDir: join(stateDir, 'agents', triage.stack.agent.name) }] });
}, 120_000);

afterAll(async () => {
  await console_?.close();
  await triage?.stack.close();
  await refunds?.stack.close();
  await model?.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

describe('the console of serve with several agents', () => {
  it("resumes a failed run of the second agent on that agent's engine: the chain shows the resume, the run finishes there", async () => {
    const runId = 'agents-console-resume';
    model.down = true;
    const { executionArn } = triage.stack.engine.startExecution({ name: runId, input: { runId, input: sampleInput, config: { approvalTimeoutSeconds: 3600 } } });
    expect(await triage.stack.engine.waitForExecution(executionArn)).toMatchObject({ status: 'FAILED' });
    expect((await triage.stack.ledger.getRun(runId))!.status).toBe('failed');
    model.down = false;

    // Listed with the first agent's runs, and opened from the second agent's ledger.
    expect((await get('runs')).runs.map((run: { runId: string }) => run.runId)).toContain(runId);
    expect(await get(`runs/${runId}`)).toMatchObject({ report: { agent: triage.stack.agent.name, status: 'failed' } });

    const resumed = await post(`runs/${runId}/resume`, {});
    expect(resumed).toMatchObject({ status: 200, body: { ok: true } });
    // An execution of the second agent's state machine, on its engine (the first's knows nothing of it).
    expect(resumed.body.executionArn).toMatch(new RegExp(`^${triage.stack.stateMachineArn.replace(':stateMachine:', ':execution:').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:${runId}-`));
    expect(() => refunds.stack.engine.describeExecution(resumed.body.executionArn)).toThrow();
    expect(await triage.stack.engine.waitForExecution(resumed.body.executionArn)).toMatchObject({ status: 'SUCCEEDED' });
    await Promise.all(triage.decisions);
    expect((await triage.stack.ledger.getRun(runId))!.status).toBe('succeeded');
    expect(await refunds.stack.ledger.getRun(runId)).toBeUndefined();

    const chain = (await get(`runs/${runId}`)).executions as ExecutionLink[];
    expect(chain.map(({ via, role, status }) => ({ via, role, status }))).toEqual([
      { via: 'start', role: 'superseded', status: 'FAILED' },
      { via: 'resume', role: 'succeeded', status: 'SUCCEEDED' },
    ]);
    expect(keysSentTwice(triage.stack.world)).toEqual([]);
  }, 240_000);
});
