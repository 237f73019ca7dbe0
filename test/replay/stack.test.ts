import { StartExecutionCommand } from '@aws-sdk/client-sfn';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyRun } from '../../lambdas/ledger/seal.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { postDecision, startAgentHarness } from '../support/agent-harness.js';
import { sampleInput, type Harness } from '../support/refund-harness.js';
import { serveStack, stackSealer, type ServedStack } from '../support/served-stack.js';
import { snippet } from '../readme/readme-text.js';

/**
 * Replay and fork against a deployed stack (`--stack`): the CLI reads the stack's ledger through
 * the real DynamoDB client and starts forks through the real Step Functions client — pointed by
 * the SDK's endpoint settings at the local engine and its DynamoDB ledger on dynalite, as the
 * other --stack tests are. And the fork request of the README, started as written.
 */
const exec = promisify(execFile);
const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;

let harness: Harness;
let served: ServedStack;

beforeAll(async () => {
  harness = await startAgentHarness({
    agent: refundReconciler,
    ledger: 'dynalite',
    sealer: stackSealer(),
    onAsked: (approval, stack) => void postDecision(stack, approval.approvalId, { decision: 'approve', reason: 'test' }),
  });
  served = await serveStack(harness);
  expect((await harness.run({ runId: 'day1', input: sampleInput })).status).toBe('SUCCEEDED');
});

afterAll(async () => {
  await served?.close();
  await harness?.stack.close();
});

async function savepoint(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, '--stack', 'Savepoint', ...args], { env: served.env, timeout: 120_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const refunds = () => harness.stack.world.payments.refunds().length;

describe('replay and fork on a deployed stack', () => {
  it("starts the README's fork request as written: a dry fork of day1 at turn 12 that sends nothing", async () => {
    const block = snippet('fork-request');
    const request = JSON.parse(block) as { runId: string; input: unknown; fork: { from: string; at: number } };
    expect(request.input).toEqual(sampleInput);
    const paid = refunds();
    const { executionArn } = await harness.stack.sfn.send(new StartExecutionCommand({ stateMachineArn: harness.stack.stateMachineArn, name: 'readme-fork', input: block }));
    await waitForChain(harness.stack.engine, harness.stack.ledger, request.runId, executionArn!);
    const run = await harness.stack.ledger.getRun(request.runId);
    expect(run).toMatchObject({ status: 'succeeded', forkedFrom: { runId: 'day1', turn: 12, effects: 'dry' } });
    expect(refunds()).toBe(paid);
    const { turns } = await harness.stack.ledger.listConversation(request.runId);
    expect(turns.length).toBeGreaterThan(11);
  });

  it('forks a run of the stack through the CLI: the hazard report first, then a StartExecution whose StartRun copies the prefix; nothing paid twice', async () => {
    const paid = refunds();
    const forked = await savepoint('fork', 'day1', '--at', '5', '--run-id', 'day1-reuse', '--yes', '--json');
    expect(forked.code, forked.stderr).toBe(0);
    expect(forked.stderr).toMatch(/^fork of day1 at turn 5, effects reuse: the parent made \d+ writes from turn 5 on:\n {2}turn \d+ call \d+: issue_refund/m);
    const started = JSON.parse(forked.stdout) as { runId: string; executionArn: string; execution: string };
    expect(started).toMatchObject({ runId: 'day1-reuse', execution: expect.stringMatching(/^https:\/\/us-east-1\.console\.aws\.amazon\.com\/states\//) });
    await waitForChain(harness.stack.engine, harness.stack.ledger, 'day1-reuse', started.executionArn);
    expect(await harness.stack.ledger.getRun('day1-reuse')).toMatchObject({ status: 'succeeded', forkedFrom: { runId: 'day1', turn: 5, effects: 'reuse' } });
    expect(refunds()).toBe(paid);
    for (const runId of ['day1', 'day1-reuse']) expect((await verifyRun(harness.stack.ledger, runId)).problems).toEqual([]);
  });

  it("replays the stack's run here from its ledger, identically and with no live call", async () => {
    const served = harness.stack.model.requestCount();
    const replayed = await savepoint('replay', 'day1', '--agent', 'refund-reconciler', '--json');
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
    expect(JSON.parse(replayed.stdout)).toMatchObject({ runId: 'day1', identical: true, live: { model: 0, tools: 0 } });
    expect(harness.stack.model.requestCount()).toBe(served);
  });

  it("replays every ended run of the stack's agent here (--all: a keyed query of its runs), identically and with no live call", async () => {
    const served = harness.stack.model.requestCount();
    const replayed = await savepoint('replay', '--all', '--agent', 'refund-reconciler', '--json');
    expect(replayed.code, replayed.stdout + replayed.stderr).toBe(0);
    const checked = JSON.parse(replayed.stdout) as { runs: { runId: string; identical: boolean; live: { model: number; tools: number } }[]; ok: boolean; notReplayed: unknown[] };
    expect(checked).toMatchObject({ agent: 'refund-reconciler', ok: true, notReplayed: [], running: [], damaged: [] });
    // day1, and the forks the tests before this one started, when they ran first.
    expect(checked.runs.map((run) => run.runId)).toContain('day1');
    for (const run of checked.runs) expect(run).toMatchObject({ identical: true, live: { model: 0, tools: 0 } });
    expect(harness.stack.model.requestCount()).toBe(served);
  });
});
