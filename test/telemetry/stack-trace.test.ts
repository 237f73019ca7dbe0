import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { otlpSink } from '../../lambdas/telemetry/export.js';
import { traceIdOf } from '../../lambdas/telemetry/spans.js';
import { startOtlpReceiver, type ReceivedSpan, type Receiver } from '../support/otlp-receiver.js';
import { startHarness, type Harness } from '../support/refund-harness.js';
import { serveStack, stackSealer, type ServedStack } from '../support/served-stack.js';

/**
 * `savepoint --stack <name> trace <runId>`: the trace rebuilt from the deployed stack's ledger.
 * The local twin stands in for AWS as in test/cli/stack.test.ts: the CLI finds the table through
 * the local CloudFormation endpoint's outputs and reads the DynamoDB ledger (on dynalite) with the
 * real SDK client and the seal key from the stack's secret. The run itself exported its spans live
 * (the local stack with the OTLP export on), so the rebuilt trace has something to equal.
 */
const exec = promisify(execFile);
const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;
const day = makeSampleDay(7, { plain: 2, already_refunded: 0, mismatch: 1, large: 0 });
const runId = 'stack-traced';

let receiver: Receiver;
let harness: Harness;
let served: ServedStack;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const tracing = otlpSink({ url: `${receiver.url}/v1/traces`, headers: {}, protocol: 'http/json', serviceName: 'stack', timeoutMs: 2_000, content: false });
  harness = await startHarness({ ledger: 'dynalite', sealer: stackSealer(), day, tracing });
  served = await serveStack(harness);
});

afterAll(async () => {
  await served?.close();
  await harness?.stack.close();
  await receiver?.close();
});

async function savepoint(args: string[], extra: NodeJS.ProcessEnv = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [bin, '--stack', 'Savepoint', ...args], { env: { ...served.env, ...extra }, timeout: 60_000 });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

const ofRun = (spans: ReceivedSpan[]) => spans.filter((span) => span.traceId === traceIdOf(runId));
const byId = (spans: ReceivedSpan[]) => [...spans].sort((a, b) => a.spanId.localeCompare(b.spanId)).map((span) => ({ ...span, resource: undefined, startNanos: String(span.startNanos), endNanos: String(span.endNanos) }));

describe('savepoint trace --stack', { timeout: 240_000 }, () => {
  it("rebuilds from the stack's DynamoDB ledger the spans the run exported live, id for id", async () => {
    const started = await savepoint(['run', '--agent', 'refund-reconciler', '--run-id', runId, '--input', JSON.stringify({ date: day.date }), '--json']);
    expect(started.code, started.stderr).toBe(0);
    const { executionArn } = JSON.parse(started.stdout) as { executionArn: string };
    expect((await harness.stack.engine.waitForExecution(executionArn)).status).toBe('SUCCEEDED');
    const live = ofRun(receiver.spans);
    expect(live.filter((span) => span.name.startsWith('execute_tool ')).length).toBeGreaterThan(3);
    expect(live.filter((span) => span.name.startsWith('invoke_agent '))).toHaveLength(1);

    receiver.clear();
    const traced = await savepoint(['trace', runId, '--agent', 'refund-reconciler'], { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' });
    expect(traced.code, traced.stderr).toBe(0);
    expect(traced.stderr).toContain(`${live.length} spans of run ${runId} exported`);
    expect(byId(ofRun(receiver.spans))).toEqual(byId(live));

    // With no endpoint: the tree, read from the stack too.
    const printed = await savepoint(['trace', runId]);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout.split('\n')[0]).toMatch(/^invoke_agent refund-reconciler {2}/);
    // A run the stack's ledger does not hold is named.
    const missing = await savepoint(['trace', 'no-such-run']);
    expect(missing).toMatchObject({ code: 2, stderr: expect.stringContaining('no run no-such-run') });
  });
});
