import { localUser } from '../../local/services/approval-api.js';
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { duplicatePayments, startHarness, type Harness } from '../support/refund-harness.js';
import { waitFor } from '../support/agent-harness.js';
import { serveStack, stackSealer, type ServedStack } from '../support/served-stack.js';

/**
 * `savepoint --stack <name> …`: the CLI's deployed-stack path — CloudFormation outputs, the Step
 * Functions API, the DynamoDB ledger and the IAM-signed approval API, each through the real SDK
 * client — pointed (by the SDK's own endpoint settings) at the local engine. What is tested is the
 * code that runs against AWS.
 */
const exec = promisify(execFile);
const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;

/**
 * What the stack path needs and no more (the sample day's 25 requests are the engine tests'): two
 * plain refunds, one mismatch, and two large ones for the approve and the reject.
 */
const sampleDay = makeSampleDay(7, { plain: 2, already_refunded: 0, mismatch: 1, large: 2 });

let harness: Harness;
let served: ServedStack;
let env: NodeJS.ProcessEnv;

/**
 * A deployed stack of its own for each group of tests: two runs of the same day share their refunds'
 * approvals (one request per effect), so a run after another one's decisions waits for nobody.
 */
function onItsOwnStack(options: Parameters<typeof startHarness>[0] = {}): void {
  beforeAll(async () => {
    // The DynamoDB ledger, as on AWS: the CLI reads it with the real DynamoDB client.
    harness = await startHarness({ ledger: 'dynalite', sealer: stackSealer(), day: sampleDay, ...options });
    served = await serveStack(harness);
    env = served.env;
  });
  afterAll(async () => {
    await served?.close();
    await harness?.stack.close();
  });
}

async function savepoint(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, '--stack', 'Savepoint', ...args], { env, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

/** The approval API checked the last request's signature (and would have refused it otherwise). */
const signatureIsValid = async (received: ServedStack['approvalRequests'][number]) => received.signed;

const pendingOf = (runId: string, index = 0) => waitFor(() => harness.approvals.filter((approval) => approval.runId === runId)[index]);

describe('the CLI against a deployed stack', () => {
  onItsOwnStack();

  it('starts a run, decides its approvals with IAM-signed requests, and reports it from the stack', async () => {
    const started = await savepoint('run', '--agent', 'refund-reconciler', '--input', JSON.stringify({ date: sampleDay.date }), '--json');
    expect(started.code, started.stderr).toBe(0);
    const { runId, executionArn } = JSON.parse(started.stdout) as { runId: string; executionArn: string };
    expect(runId).toBe('refunds-2026-11-28');
    expect(executionArn).toContain(':execution:');
    // Started through the stack's runs API, signed: its starter is who the API authenticated.
    expect(served.approvalRequests.find((request) => request.method === 'POST' && request.path === '/runs')).toMatchObject({ signed: true });
    expect((await harness.stack.ledger.getRun(runId))!.startedBy).toBe(localUser());

    const first = await pendingOf(runId);
    const listed = JSON.parse((await savepoint('approvals', '--json')).stdout) as { approvals: { approvalId: string }[] };
    expect(listed.approvals.map((approval) => approval.approvalId)).toContain(first.approvalId);
    expect(await savepoint('approve', first.approvalId, '--reason', 'checked')).toMatchObject({ code: 0 });
    expect(await signatureIsValid(served.approvalRequests.at(-1)!)).toBe(true);

    const second = await pendingOf(runId, 1);
    expect(await savepoint('reject', second.approvalId, '--reason', 'too much')).toMatchObject({ code: 0 });
    await harness.stack.engine.waitForExecution(executionArn);

    const status = await savepoint('status', runId, '--json');
    expect(JSON.parse(status.stdout)).toMatchObject({ lifecycle: 'completed', status: 'succeeded', summary: { requests: 5, issued: 3, flagged: 2, escalated: 1 } }); // flagged: the mismatch and the rejected one
    expect(duplicatePayments(harness.stack)).toEqual([]);
    const runs = JSON.parse((await savepoint('runs', '--status', 'succeeded', '--json')).stdout) as { runs: { runId: string; execution: string }[] };
    expect(runs.runs.find((run) => run.runId === runId)?.execution).toMatch(/^https:\/\/us-east-1\.console\.aws\.amazon\.com\/states\/home\?region=us-east-1#\/v2\/executions\/details\/arn:/);
    // Finance's check, with its own credentials: the seal key from the stack's secret.
    const verified = await savepoint('verify', runId);
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(new RegExp(`^${runId}: OK, \\d+ records \\(\\d+ turns, \\d+ calls, 2 approvals\\) verify`));
  }, 240_000);

  it('names a stack that does not exist, and an input it cannot start, exiting 2', async () => {
    const missing = await exec(process.execPath, [bin, '--stack', 'Nope', 'runs'], { env }).catch((error: { code: number; stderr: string }) => error);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringMatching(/Stack with id Nope does not exist/) });
    const bad = await savepoint('run', '--input', '{"date":"2026-02-30"}');
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringMatching(/date: 2026-02-30 is not a calendar date/) });
  }, 240_000);
});

describe('the CLI against a deployed stack whose approvals above $0 need two people', () => {
  onItsOwnStack({ approvals: { policy: { separationOfDuties: false, secondApproverAboveMinor: 0 } } });

  it('says after the first approval that it waits for a second person, and who approved first', async () => {
    const started = await savepoint('run', '--run-id', 'two-people', '--input', JSON.stringify({ date: sampleDay.date }), '--json');
    expect(started.code, started.stderr).toBe(0);
    const { approvalId } = await pendingOf('two-people');
    const approved = await savepoint('approve', approvalId, '--reason', 'checked');
    expect(approved, approved.stderr).toMatchObject({ code: 0 });
    expect(approved.stdout).toBe(`${approvalId}: pending: waiting for a second person to approve (approved first by ${localUser()})\n`);
    expect(await harness.stack.ledger.findApproval(approvalId)).toMatchObject({ status: 'pending', firstApproval: { by: localUser() } });
    expect(await savepoint('kill', 'two-people')).toMatchObject({ code: 0 });
    await harness.stack.engine.waitForExecution((await harness.stack.ledger.getRun('two-people'))!.executionArn);
  }, 240_000);
});

describe('the CLI against a deployed stack, killing', () => {
  onItsOwnStack();

  it('kills a run waiting for a person, through the stack', async () => {
    const started = await savepoint('run', '--run-id', 'stack-kill', '--input', JSON.stringify({ date: sampleDay.date }), '--json');
    const { executionArn } = JSON.parse(started.stdout) as { executionArn: string };
    await pendingOf('stack-kill');
    expect(await savepoint('kill', 'stack-kill', '--reason', 'wrong day')).toMatchObject({ code: 0 });
    await harness.stack.engine.waitForExecution(executionArn);
    const status = JSON.parse((await savepoint('status', 'stack-kill', '--json')).stdout) as Record<string, unknown>;
    expect(status).toMatchObject({ lifecycle: 'cancelled', status: 'killed', killed: { reason: 'wrong day' } });
  }, 240_000);

  it('stops waiting on Ctrl-C, not the run: `run --wait` says the stack goes on with it, exit 130', async () => {
    const waiting = spawn(process.execPath, [bin, '--stack', 'Savepoint', 'run', '--run-id', 'stack-wait', '--input', JSON.stringify({ date: sampleDay.date }), '--wait'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    // The line that says it waits comes after its signal handlers are in place.
    const saysItWaits = new Promise<void>((resolve) =>
      waiting.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (/waiting for it \(Ctrl-C stops waiting, not the run\)…$/m.test(output)) resolve();
      }),
    );
    waiting.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    const exited = new Promise<number | null>((resolve) => waiting.on('close', resolve));
    await pendingOf('stack-wait');
    await saysItWaits;
    waiting.kill('SIGINT');
    expect(await exited, output).toBe(130);
    expect(output).toMatch(/^savepoint: interrupted — stopped waiting; stack Savepoint goes on with run stack-wait: `savepoint --stack Savepoint status stack-wait` shows it$/m);
    const run = (await harness.stack.ledger.getRun('stack-wait'))!;
    expect(run.status).toBe('running');
    expect(await savepoint('kill', 'stack-wait')).toMatchObject({ code: 0 });
    await harness.stack.engine.waitForExecution(run.executionArn);
  }, 240_000);
});
