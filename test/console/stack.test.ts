import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForChain } from '../../local/runtime/chain.js';
import type { ExecutionLink, Timeline } from '../../console/views.js';
import { serveStack, stackSealer, STACK_ACCESS_KEY, type ServedStack } from '../support/served-stack.js';
import { duplicatePayments, sampleInput, startHarness, type Harness } from '../support/refund-harness.js';
import { waitFor } from '../support/agent-harness.js';
import { modelWithOutage } from '../support/model-outage.js';

/**
 * `savepoint console --stack <name>`: the console on a deployed stack, run as the CLI runs it (a
 * process of its own) with the operator's AWS credentials, against the local engine served as the
 * stack (CloudFormation outputs, the Step Functions API, the DynamoDB ledger, the IAM-signed
 * approval API: test/support/served-stack.ts). What is tested is the code that runs against AWS.
 */
const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;
/**
 * The principal API Gateway verifies the operator's signature as (the local approval API records
 * it): a user of the twin's account (local/aws/iam/deployment.ts), where the approval API's
 * resource policy lets IAM decide who may start runs, and names the operator as its approver.
 */
const OPERATOR = 'arn:aws:iam::000000000000:user/operator';
const CONSOLE_LINK = /^https:\/\/us-east-1\.console\.aws\.amazon\.com\/states\/home\?region=us-east-1#\/v2\/executions\/details\/arn:aws:states:/;

let harness: Harness;
let served: ServedStack;
/** The model, down (503) while `model.down`: CallModel exhausts its retries and the run fails. */
let model: Awaited<ReturnType<typeof modelWithOutage>>;
let child: ChildProcess;
let stateDir: string;
let origin: string;
let token: string;

/** Starts `savepoint console --stack Savepoint …` and reads what it prints up to its address's explanation. */
async function startConsoleProcess(...args: string[]): Promise<{ child: ChildProcess; url: string; output: string }> {
  const started = spawn(process.execPath, [bin, '--state-dir', stateDir, 'console', '--stack', 'Savepoint', ...args], { env: served.env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let errors = '';
  started.stderr!.on('data', (chunk: Buffer) => (errors += chunk.toString()));
  return new Promise((resolve, reject) => {
    started.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const url = /savepoint: console (http\S+)/.exec(output)?.[1];
      if (url && output.includes('Ctrl-C')) resolve({ child: started, url, output });
    });
    started.once('exit', (code) => reject(new Error(`console exited ${code}: ${errors}${output}`)));
  });
}

async function stop(process_: ChildProcess | undefined): Promise<void> {
  if (!process_ || process_.exitCode !== null) return;
  const exited = new Promise((resolve) => process_.once('exit', resolve));
  process_.kill('SIGINT');
  await exited;
}

const headers = (extra: Record<string, string> = {}) => ({ 'x-savepoint-token': token, ...extra });
async function get(path: string): Promise<any> {
  const response = await fetch(`${origin}/api/${path}`, { headers: headers() });
  expect(response.status, `GET ${path}`).toBe(200);
  return response.json();
}
async function post(path: string, body: unknown, extra: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const response = await fetch(`${origin}/api/${path}`, { method: 'POST', headers: headers({ origin, 'content-type': 'application/json', ...extra }), body: JSON.stringify(body) });
  return { status: response.status, body: await response.json() };
}

beforeAll(async () => {
  // The DynamoDB ledger, as on AWS; the approval API records the operator's principal, as API Gateway's IAM authorization does.
  // A model endpoint in front of the simulated one, down while `model.down` says so; no automatic
  // recovery and no breaker, so that an outage leaves a failed run for the console to resume.
  model = await modelWithOutage();
  harness = await startHarness({
    ledger: 'dynalite',
    sealer: stackSealer(),
    approvals: { principal: OPERATOR },
    modelUrl: model.url,
    recovery: false,
    breaker: { failures: 1_000, windowMs: 1_000, openMs: 1, probeLeaseMs: 1 },
  });
  model.target = harness.stack.endpoints.model;
  served = await serveStack(harness);
  stateDir = mkdtempSync(join(tmpdir(), 'savepoint-console-stack-'));
  const started = await startConsoleProcess();
  child = started.child;
  const url = new URL(started.url);
  origin = url.origin;
  token = new URLSearchParams(url.hash.slice(1)).get('token')!;
}, 120_000);

afterAll(async () => {
  await stop(child);
  await served?.close();
  await harness?.stack.close();
  await model?.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

// In order: the resume test's run finishes without a person only once the hand-off test has paid the refunds that ask for one (they share a world).
describe('the console on a deployed stack', { shuffle: false }, () => {
  it('kills a run waiting for a person, as the operator, and refuses posts without the token or from another origin', async () => {
    // A run that asks a person at once, whatever the other tests' runs paid already: its step budget
    // is spent after two steps and it asks for more.
    const runId = 'stack-console-kill';
    const { executionArn } = harness.stack.engine.startExecution({
      name: runId,
      input: { runId, input: sampleInput, config: { approvalTimeoutSeconds: 3600, maxSteps: 2, onBudgetExceeded: 'ask' } },
    });
    await waitFor(() => harness.approvals.find((approval) => approval.runId === runId));

    expect((await fetch(`${origin}/api/runs/${runId}/kill`, { method: 'POST', headers: { origin, 'content-type': 'application/json' }, body: '{}' })).status).toBe(403);
    expect((await post(`runs/${runId}/kill`, {}, { origin: 'http://evil.example' })).status).toBe(403);
    expect((await harness.stack.ledger.getRun(runId))!.killed).toBeUndefined();

    const before = served.approvalRequests.length;
    expect(await post(`runs/${runId}/kill`, { reason: 'wrong day' })).toMatchObject({ status: 200, body: { ok: true } });
    await waitForChain(harness.stack.engine, harness.stack.ledger, runId, executionArn);
    const run = (await harness.stack.ledger.getRun(runId))!;
    expect(run).toMatchObject({ status: 'killed', killed: { reason: 'wrong day', by: expect.stringContaining(`(${STACK_ACCESS_KEY})`) } });
    // The pending approval was rejected through the signed approval API, as the operator.
    expect(served.approvalRequests.slice(before).map((request) => request.signed)).toEqual([true]);
    const { approvals } = await harness.stack.ledger.listConversation(runId);
    expect(approvals.filter((approval) => approval.status === 'rejected').map((approval) => approval.decidedBy)).toEqual([OPERATOR]);
    // A second kill of a finished run changes nothing.
    expect((await post(`runs/${runId}/kill`, {})).status).toBe(409);
  }, 240_000);

  it('shows a run that hands off across executions, and approves its requests as the operator through signed requests', async () => {
    const info = await get('info');
    expect(info).toMatchObject({ agent: 'refund-reconciler', where: 'stack Savepoint (us-east-1)', readOnly: false, canStart: true });

    // A run with a low history threshold: it hands off to successor executions between its approvals.
    const runId = 'stack-console';
    const { executionArn } = harness.stack.engine.startExecution({
      name: runId,
      input: { runId, input: sampleInput, config: { approvalTimeoutSeconds: 3600, historyEventsBeforeHandoff: 120 } },
    });
    const first = await waitFor(() => harness.approvals.find((approval) => approval.runId === runId));

    // The list and the run, read with the operator's credentials (DynamoDB, Step Functions).
    const { runs } = await get('runs');
    expect(runs.find((row: { runId: string }) => row.runId === runId)).toMatchObject({ status: 'running', lifecycle: 'input_required', pendingApprovals: 1 });
    const waiting = await get(`runs/${runId}`);
    expect(waiting.approvals.map((approval: { approvalId: string }) => approval.approvalId)).toEqual([first.approvalId]);
    for (const execution of waiting.executions as ExecutionLink[]) expect(execution.link).toMatch(CONSOLE_LINK);
    expect((waiting.executions as ExecutionLink[]).at(-1)).toMatchObject({ role: 'driving', status: 'RUNNING' });
    const machine = await get(`runs/${runId}/state-machine`);
    expect(machine.current).toBe('RequestApproval');
    expect(machine.counts['CallModel'].entered).toBeGreaterThanOrEqual(1);

    // Approve every request from the console: each reaches the approval API signed with the operator's key.
    const decided: string[] = [];
    for (;;) {
      const run = (await harness.stack.ledger.getRun(runId))!;
      if (run.status !== 'running') break;
      const pending = await waitFor(async () => {
        const now = (await harness.stack.ledger.getRun(runId))!;
        if (now.status !== 'running') return 'done';
        return harness.approvals.find((approval) => approval.runId === runId && !decided.includes(approval.approvalId))?.approvalId;
      });
      if (pending === 'done') break;
      const before = served.approvalRequests.length;
      expect(await post(`approvals/${pending}/decide`, { decision: 'approve', reason: 'checked on the stack' })).toMatchObject({ status: 200, body: { ok: true, status: 'approved' } });
      const requests = served.approvalRequests.slice(before);
      expect(requests).toHaveLength(1);
      expect(requests[0]).toMatchObject({ method: 'POST', signed: true, headers: { authorization: expect.stringContaining(`Credential=${STACK_ACCESS_KEY}/`) } });
      decided.push(pending);
    }
    expect(decided.length).toBeGreaterThanOrEqual(1);
    await waitForChain(harness.stack.engine, harness.stack.ledger, runId, executionArn);

    const done = (await harness.stack.ledger.getRun(runId))!;
    expect(done.status).toBe('succeeded');
    const { approvals } = await harness.stack.ledger.listConversation(runId);
    for (const approvalId of decided) expect(approvals.find((approval) => approval.approvalId === approvalId)).toMatchObject({ status: 'approved', decidedBy: OPERATOR });
    expect(duplicatePayments(harness.stack)).toEqual([]);

    // The chain: every execution that drove the run, in order, each with its reason and its AWS console link.
    const view = await get(`runs/${runId}`);
    const chain = view.executions as ExecutionLink[];
    expect(chain.length).toBeGreaterThanOrEqual(2);
    expect(chain.map((execution) => execution.executionArn)).toEqual(done.executions);
    expect(chain[0]).toMatchObject({ via: 'start', role: 'handed off', status: 'SUCCEEDED' });
    for (const execution of chain.slice(1)) expect(execution).toMatchObject({ via: 'handoff', reason: expect.stringMatching(/^continue-as-new: .* reached the history threshold \(120 events\)$/) });
    expect(chain.slice(0, -1).every((execution) => execution.role === 'handed off')).toBe(true);
    expect(chain.at(-1)).toMatchObject({ role: 'succeeded', status: 'SUCCEEDED' });
    for (const execution of chain) expect(execution.link).toBe(`https://us-east-1.console.aws.amazon.com/states/home?region=us-east-1#/v2/executions/details/${execution.executionArn}`);
    const line = (await get(`runs/${runId}/timeline?pageSize=1000`)) as Timeline;
    expect(line.items.filter((item) => item.kind === 'execution').map((item) => (item as { via: string }).via)).toEqual(chain.map((execution) => execution.via));

    // The graph counts over the chain (from each execution's Step Functions history), or over one execution.
    const all = await get(`runs/${runId}/state-machine`);
    expect(all.current).toBeNull();
    expect(all.executions).toEqual(chain.map((execution) => execution.name));
    expect(all.counts['Handoff'].entered).toBe(chain.length - 1);
    const one = await get(`runs/${runId}/state-machine?execution=${chain[0]!.name}`);
    expect(one).toMatchObject({ selected: chain[0]!.name, counts: { Handoff: { entered: 1 } } });
    expect(one.counts['CallModel'].entered).toBeLessThan(all.counts['CallModel'].entered);
    expect((await fetch(`${origin}/api/runs/${runId}/state-machine?execution=nope`, { headers: headers() })).status).toBe(404);

    // The console holds no key: nothing was read or written in the state directory, and every decision went through the signed API.
    expect(readdirSync(stateDir)).toEqual([]);
    expect(served.approvalRequests.every((request) => request.signed)).toBe(true);
  }, 300_000);

  it('is read-only when bound to anything but loopback', async () => {
    const readOnly = await startConsoleProcess('--host', '127.0.0.2');
    try {
      expect(readOnly.output).toMatch(/bound to 127\.0\.0\.2, not loopback: read-only/);
      const url = new URL(readOnly.url);
      const auth = { 'x-savepoint-token': new URLSearchParams(url.hash.slice(1)).get('token')! };
      expect(await (await fetch(`${url.origin}/api/info`, { headers: auth })).json()).toMatchObject({ readOnly: true, where: 'stack Savepoint (us-east-1)' });
      const refused = await fetch(`${url.origin}/api/kill-all`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"on":true}' });
      expect(refused.status).toBe(403);
      expect(await harness.stack.ledger.getGlobalKill()).toBeUndefined();
    } finally {
      await stop(readOnly.child);
    }
  }, 120_000);

  it('resumes a failed run with a StartExecution of the operator: the chain shows the resume', async () => {
    const runId = 'stack-console-resume';
    model.down = true;
    const { executionArn } = harness.stack.engine.startExecution({ name: runId, input: { runId, input: sampleInput, config: { approvalTimeoutSeconds: 3600 } } });
    expect(await harness.stack.engine.waitForExecution(executionArn)).toMatchObject({ status: 'FAILED' });
    expect((await harness.stack.ledger.getRun(runId))!.status).toBe('failed');
    model.down = false;

    const resumed = await post(`runs/${runId}/resume`, {});
    expect(resumed).toMatchObject({ status: 200, body: { ok: true, executionArn: expect.stringContaining(`:${runId}-`) } });
    // Still shares the world with the hand-off test: it finishes without a person only because
    // that test's run paid the refunds that ask for one (a world per test would end that).
    await waitForChain(harness.stack.engine, harness.stack.ledger, runId, resumed.body.executionArn);
    expect((await harness.stack.ledger.getRun(runId))!.status).toBe('succeeded');
    const chain = (await get(`runs/${runId}`)).executions as ExecutionLink[];
    expect(chain.map(({ via, role, status }) => ({ via, role, status }))).toEqual([
      { via: 'start', role: 'superseded', status: 'FAILED' },
      { via: 'resume', role: 'succeeded', status: 'SUCCEEDED' },
    ]);
    expect(chain[1]!.link).toMatch(CONSOLE_LINK);
    expect(duplicatePayments(harness.stack)).toEqual([]);
  }, 240_000);
});
