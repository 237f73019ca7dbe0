import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { afterEach, describe, expect, it } from 'vitest';
import { executionChain } from '../../lambdas/guards/history.js';
import { exporterSink } from '../../lambdas/telemetry/export.js';
import { runSpanId, spanIdOf, traceIdOf, traceOf, turnSpanId } from '../../lambdas/telemetry/spans.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';
import { counterAgent } from '../support/counter-agent.js';

/**
 * Span links of a run driven by several executions (continue-as-new): the local stack runs the
 * synthesized state machine with the live export going to the SDK's in-memory exporter, the
 * handoff threshold low enough that the run is handed on twice or more.
 */

let stack: LocalStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const comparable = (span: ReadableSpan) => ({
  name: span.name,
  spanId: span.spanContext().spanId,
  parent: span.parentSpanContext?.spanId,
  attributes: span.attributes,
  links: span.links.map((link) => ({ spanId: link.context.spanId, traceId: link.context.traceId, attributes: link.attributes })),
});

describe('span links', { timeout: 120_000 }, () => {
  it('a handed-off run exports one savepoint.handoff span per successor, linked to the last turn before it, and savepoint trace rebuilds the same', async () => {
    const exporter = new InMemorySpanExporter();
    const sink = exporterSink(exporter, resourceFromAttributes({ 'service.name': 'links' }));
    const agent = counterAgent({ calls: 40, perTurn: 2 });
    stack = await startLocalStack({ agent, retryDelayMs: 1, tracing: sink });
    const runId = 'linked-1';
    const { executionArn } = stack.engine.startExecution({ name: runId, input: { runId, input: { id: 'a' }, config: { historyEventsBeforeHandoff: 120 } } });
    await waitForChain(stack.engine, stack.ledger, runId, executionArn);
    const run = (await stack.ledger.getRun(runId))!;
    expect(run.status).toBe('succeeded');
    const chain = executionChain(run);
    expect(chain.length).toBeGreaterThanOrEqual(3);
    expect(chain.slice(1).every((link) => link.via === 'handoff')).toBe(true);

    // The record says when each successor took over, and at which turn.
    expect(run.attachments?.map((attachment) => attachment.execution)).toEqual(chain.slice(1).map((_, index) => index + 1));
    const live = exporter.getFinishedSpans().filter((span) => span.spanContext().traceId === traceIdOf(runId));
    const handoffs = live.filter((span) => span.name === 'savepoint.handoff');
    expect(handoffs).toHaveLength(chain.length - 1);
    for (const attachment of run.attachments!) {
      const span = handoffs.find((one) => one.spanContext().spanId === spanIdOf(runId, `execution/${attachment.execution}`))!;
      expect(span.attributes).toMatchObject({ 'savepoint.execution.via': 'handoff', 'savepoint.execution.name': chain[attachment.execution]!.name, 'savepoint.model_turns': attachment.modelTurns });
      expect(span.parentSpanContext?.spanId).toBe(runSpanId(runId));
      expect(attachment.modelTurns).toBeGreaterThan(0);
      // The link points at a span of the trace: the turn recorded last before the takeover.
      expect(span.links.map((link) => link.context.spanId)).toEqual([turnSpanId(runId, attachment.modelTurns)]);
      expect(live.some((one) => one.spanContext().spanId === turnSpanId(runId, attachment.modelTurns))).toBe(true);
      expect(new Date(attachment.at).getTime()).toBeGreaterThanOrEqual(new Date(run.createdAt).getTime());
    }
    // The turns each successor began with come after its link's turn: the link is where it took over.
    const turnsAt = run.attachments!.map((attachment) => attachment.modelTurns);
    expect(turnsAt).toEqual([...turnsAt].sort((a, b) => a - b));

    // `savepoint trace` derives the same spans, links included, from the records.
    exporter.reset();
    await sink.export(traceOf({ run, ...(await stack.ledger.listConversation(runId)) }, { tools: agent.tools }));
    const rebuilt = new Map(exporter.getFinishedSpans().map((span) => [span.spanContext().spanId, comparable(span)]));
    for (const span of live) expect(rebuilt.get(span.spanContext().spanId), span.name).toEqual(comparable(span));
  });
});
