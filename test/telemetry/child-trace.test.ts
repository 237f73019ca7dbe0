import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { childRunId } from '../../lambdas/define.js';
import { callSpanId, runSpanId, traceIdOf } from '../../lambdas/telemetry/spans.js';
import { savepoint } from '../support/cli-process.js';
import { startOtlpReceiver, type Receiver } from '../support/otlp-receiver.js';
import { scratchDir } from '../support/scratch.js';

/**
 * A child run's trace (defineAgentTool) is linked to its parent's: note-delegator runs
 * journal-notes as its tool `delegate_note`, in a CLI process exporting over OTLP/HTTP (the official
 * exporter) to a local receiver. Each run is a trace of its own; the child's invoke_agent links to
 * the execute_tool span of the parent's call that started it, and that span links back.
 */
const agent = new URL('../crash/fixtures/note-delegator.dev.ts', import.meta.url).pathname;
const runId = 'traced-delegation';
const child = childRunId(runId, 1, 'call_1');

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());

it("links the child run's root span to the parent's execute_tool span of its call, and back", { timeout: 120_000 }, async () => {
  const stateDir = join(scratchDir('savepoint-child-trace-'), 'state');
  const finished = await savepoint(['--state-dir', stateDir, 'run', '--run-id', runId, '--input', JSON.stringify({ text: 'lunch at noon' }), '--json', '--agent', agent], {
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_SERVICE_NAME: 'delegation' },
  });
  expect(finished.code, finished.stderr).toBe(0);
  const spans = receiver.spans;
  const parentCall = spans.find((span) => span.traceId === traceIdOf(runId) && span.name === 'execute_tool delegate_note');
  const childRoot = spans.find((span) => span.traceId === traceIdOf(child) && span.name === 'invoke_agent journal-notes');
  expect(parentCall?.spanId).toBe(callSpanId(runId, 1, 1));
  expect(childRoot?.spanId).toBe(runSpanId(child));
  expect(childRoot!.links).toEqual([{ traceId: traceIdOf(runId), spanId: parentCall!.spanId, attributes: { 'savepoint.link': 'child_of', 'savepoint.parent.run': runId, 'savepoint.turn': 1, 'savepoint.call': 1 } }]);
  expect(parentCall!.links).toEqual([{ traceId: traceIdOf(child), spanId: childRoot!.spanId, attributes: { 'savepoint.link': 'child_run', 'savepoint.child.run': child } }]);
  // The child's own spans are its trace's, under its root: its model turn and its tool call.
  expect(spans.filter((span) => span.traceId === traceIdOf(child) && span.parentSpanId === childRoot!.spanId).map((span) => span.name)).toEqual(expect.arrayContaining(['execute_tool save_note']));
});
