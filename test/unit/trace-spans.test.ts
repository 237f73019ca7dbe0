import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { ToolCallRecord, TurnRecord } from '../../lambdas/records/ledger-records.js';
import { turnMeasurements, type Measurement } from '../../lambdas/telemetry/metrics.js';
import { metricsConfigFromEnv, sinkFromEnv, tracingConfigFromEnv } from '../../lambdas/telemetry/config.js';
import { exporterSink } from '../../lambdas/telemetry/export.js';
import { callSpan, callSpanId, runSpanId, runSpans, traceIdOf, turnSpan, turnSpanId } from '../../lambdas/telemetry/spans.js';
import { formatSpanTree } from '../../lambdas/telemetry/tree.js';
import { EXPORT_COOLDOWN_MS, tracingLedger } from '../../lambdas/telemetry/tracing-ledger.js';
import { runRecord } from '../support/records.js';

const turn = (overrides: Partial<TurnRecord> = {}): TurnRecord => ({
  kind: 'turn',
  runId: 'r1',
  turn: 1,
  model: 'anthropic:claude-haiku-4-5',
  content: [{ type: 'tool_use', id: 'toolu_1', name: 'get_order', input: { orderId: 'o1' } }],
  stopReason: 'tool_use',
  usage: { input_tokens: 100, output_tokens: 20, cache_read_input_tokens: 900, cache_creation_input_tokens: 50 },
  costMicros: 1234,
  latencyMs: 800,
  recordedAt: '2026-11-29T02:00:01.000Z',
  ...overrides,
});

const call = (overrides: Partial<ToolCallRecord> = {}): ToolCallRecord => ({
  kind: 'tool',
  runId: 'r1',
  turn: 1,
  call: 1,
  toolCallId: 'toolu_1',
  name: 'issue_refund',
  args: { orderId: 'o1', amountCents: 500 },
  effect: 'write',
  idempotencyKey: 'sp-r1-1-toolu_1-secret-key',
  status: 'completed',
  leaseUntil: '2026-11-29T02:00:05.000Z',
  attempts: 2,
  outcome: 'ok',
  result: '{"refundId":"re_1"}',
  latencyMs: 120,
  recordedAt: '2026-11-29T02:00:02.000Z',
  ...overrides,
});

describe('spans from records', () => {
  it('derives the same ids from the same run, turn and call, and different ones elsewhere', () => {
    expect(traceIdOf('r1')).toMatch(/^[0-9a-f]{32}$/);
    expect(runSpanId('r1')).toMatch(/^[0-9a-f]{16}$/);
    expect(turnSpan(turn()).spanId).toBe(turnSpanId('r1', 1));
    expect(turnSpan(turn({ recordedAt: '2026-12-01T00:00:00.000Z' })).spanId).toBe(turnSpanId('r1', 1));
    const ids = [runSpanId('r1'), turnSpanId('r1', 1), turnSpanId('r1', 2), callSpanId('r1', 1, 1), callSpanId('r1', 1, 2), callSpanId('r2', 1, 1)];
    expect(new Set(ids).size).toBe(ids.length);
    expect(traceIdOf('r1')).not.toBe(traceIdOf('r2'));
  });

  it('counts cached tokens inside gen_ai.usage.input_tokens, as the conventions do (Anthropic does not)', () => {
    const span = turnSpan(turn());
    expect(span).toMatchObject({ name: 'chat claude-haiku-4-5', kind: 'client', parentSpanId: runSpanId('r1'), startMs: Date.parse('2026-11-29T02:00:00.200Z') });
    expect(span.attributes).toMatchObject({
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.usage.input_tokens': 1050,
      'gen_ai.usage.cache_read.input_tokens': 900,
      'gen_ai.usage.cache_creation.input_tokens': 50,
      'gen_ai.usage.output_tokens': 20,
      'savepoint.cost.usd': 0.001234,
    });
  });

  it("names the provider's answer: gen_ai.response.id and .model as the turn recorded them, the model asked for beside them", () => {
    const answered = turn({ model: 'openai:gpt-5-mini', responseId: 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT', responseModel: 'gpt-5-mini-2025-08-07' });
    expect(turnSpan(answered).attributes).toMatchObject({ 'gen_ai.request.model': 'gpt-5-mini', 'gen_ai.response.model': 'gpt-5-mini-2025-08-07', 'gen_ai.response.id': 'chatcmpl-B9MBs8CjcvOU2jLn4n570S5qMJKcT' });
    expect(turnMeasurements(answered).map((point) => point.attributes['gen_ai.response.model'])).toEqual(['gpt-5-mini-2025-08-07', 'gpt-5-mini-2025-08-07', 'gpt-5-mini-2025-08-07']);
    // A turn the provider named nothing of (Bedrock), or recorded before turns kept it: no id made
    // up, and the model asked for answering, as such turns were traced.
    const unnamed = turnSpan(turn()).attributes;
    expect(unnamed).not.toHaveProperty('gen_ai.response.id');
    expect(unnamed['gen_ai.response.model']).toBe('claude-haiku-4-5');
  });

  it('records no content unless asked, and content through the redaction hook when asked', () => {
    expect(Object.keys(callSpan(call()).attributes).filter((key) => key.startsWith('gen_ai.tool.call.a') || key.endsWith('.result'))).toEqual([]);
    const redacted = callSpan(call(), { content: true, redact: (attribute, value) => (attribute === 'gen_ai.tool.call.result' ? undefined : value.replace(/"o1"/, '"***"')) });
    expect(redacted.attributes['gen_ai.tool.call.arguments']).toBe('{"orderId":"***","amountCents":500}');
    expect(redacted.attributes['gen_ai.tool.call.result']).toBeUndefined();
    expect(JSON.stringify(callSpan(call(), { content: true }))).not.toContain('secret-key');
  });

  it('marks a refused call as not executed, and a takeover by its attempts', () => {
    expect(callSpan(call({ outcome: 'rejected' })).attributes['savepoint.executed']).toBe(false);
    expect(callSpan(call()).attributes).toMatchObject({ 'savepoint.executed': true, 'savepoint.attempt': 2 });
    const tools = [{ name: 'issue_refund', effect: 'write' as const, idempotencyKeys: true }, { name: 'post_note', effect: 'write' as const }];
    expect(callSpan(call(), { tools }).attributes['savepoint.tool.guarantee']).toBe('exactly-once');
    expect(callSpan(call({ name: 'post_note' }), { tools }).attributes['savepoint.tool.guarantee']).toBe('at-most-once');
    expect(callSpan(call({ name: 'unknown' }), { tools }).attributes['savepoint.tool.guarantee']).toBeUndefined();
    expect(callSpan(call({ outcome: 'error' })).status).toBe('error');
  });

  it('prints a span that ends where its sibling starts before it, in one millisecond too (a budget check, then its model call)', () => {
    const chat = turnSpan(turn());
    const check = { ...chat, spanId: 'c'.repeat(16), name: 'savepoint.budget_check', startMs: chat.startMs, endMs: chat.startMs, attributes: {} };
    expect(formatSpanTree([chat, check]).split('\n').map((line) => line.split(' ')[0])).toEqual(['savepoint.budget_check', 'chat']);
  });

  it("prints a turn's calls in the order the model asked for them, whichever started first, where the first started", () => {
    const [first, second, third] = [1, 2, 3].map((position) => callSpan(call({ call: position, toolCallId: `toolu_${position}`, name: ['issue_refund', 'get_order', 'get_payment'][position - 1]! })));
    const at = (span: typeof first, startMs: number, endMs: number) => ({ ...span!, startMs, endMs });
    // Side by side: the read started a millisecond before the write, the other in its millisecond and ended first.
    const chat = { ...turnSpan(turn()), startMs: 0, endMs: 5 };
    const check = { ...chat, spanId: 'c'.repeat(16), name: 'savepoint.budget_check', startMs: 40, endMs: 41, attributes: {} };
    const tree = formatSpanTree([check, at(third, 11, 12), at(second, 10, 10), at(first, 11, 40), chat]);
    expect(tree.split('\n').map((line) => line.split('  ')[0])).toEqual(['chat claude-haiku-4-5', 'execute_tool issue_refund', 'execute_tool get_order', 'execute_tool get_payment', 'savepoint.budget_check']);
  });

  it('prints the tree with the run at the root', () => {
    const tree = formatSpanTree([turnSpan(turn()), callSpan(call())]);
    expect(tree.split('\n')).toEqual([expect.stringMatching(/^chat claude-haiku-4-5 {2}0\.800 s {2}in 1050 out 20 tokens {2}\$0\.001234 {2}tool_call$/), expect.stringMatching(/^execute_tool issue_refund .* ok {2}attempt 2$/)]);
  });
});

describe('the tracing decorator over a real ledger', () => {
  const setup = async () => {
    const exporter = new InMemorySpanExporter();
    const inner = EmbeddedLedger.open();
    const now = new Date('2026-11-29T02:00:10.000Z');
    const ledger = tracingLedger(inner, { sink: exporterSink(exporter, resourceFromAttributes({ 'service.name': 't' })), clock: { now: () => now } });
    await ledger.createRun(runRecord({ runId: 'r1' }));
    return { ledger, exporter, now, names: () => exporter.getFinishedSpans().map((span) => span.name) };
  };

  it('exports a turn once: a second recording finds the first and exports nothing', async () => {
    const { ledger, exporter } = await setup();
    await ledger.recordTurn(turn());
    await ledger.recordTurn(turn({ recordedAt: '2026-11-29T02:00:09.000Z' }));
    expect(exporter.getFinishedSpans().map((span) => span.spanContext().spanId)).toEqual([turnSpanId('r1', 1)]);
  });

  it('marks a repeated step that found its turn recorded and counted as not executed, linked to the turn', async () => {
    const { ledger, exporter } = await setup();
    await ledger.recordTurn(turn());
    expect(await ledger.countStep('r1', 'turn:1', { steps: 1 })).toBe(true);
    expect(await ledger.countStep('r1', 'turn:1', { steps: 1 })).toBe(false);
    const [original, replay] = exporter.getFinishedSpans();
    expect(replay!.attributes).toMatchObject({ 'savepoint.executed': false, 'savepoint.replay': true });
    expect(original!.attributes['savepoint.executed']).toBe(true);
    // It spent nothing: a backend summing the trace's token usage counts the turn once.
    expect(original!.attributes['gen_ai.usage.input_tokens']).toBeGreaterThan(0);
    expect(Object.keys(replay!.attributes).filter((name) => name.startsWith('gen_ai.usage.'))).toEqual([]);
    expect(replay!.links[0]!.context.spanId).toBe(original!.spanContext().spanId);
    expect(replay!.spanContext().spanId).not.toBe(original!.spanContext().spanId);
  });

  it('exports a claimed call when it completes, and the run when it ends', async () => {
    const { ledger, names, now } = await setup();
    const claim = await ledger.claimCall(call({ status: 'in_flight', attempts: 0, outcome: undefined, result: undefined }), now);
    expect(claim.claimed).toBe(true);
    expect(names()).toEqual([]);
    await ledger.completeCall({ runId: 'r1', turn: 1, call: 1, outcome: { outcome: 'ok', result: '{}', latencyMs: 5 }, now });
    await ledger.finishRun('r1', { status: 'succeeded' }, now);
    // The run's end: its span, and the budget check that ended it (no turn: no check let one through).
    expect(names()).toEqual(['execute_tool issue_refund', 'invoke_agent agent', 'savepoint.budget_check']);
  });

  it('never fails the step when the export fails, and stops trying for a while after a failure', async () => {
    let fail = true;
    const exporter = new InMemorySpanExporter();
    const sink = exporterSink(exporter, resourceFromAttributes({}));
    const failing = { ...sink, export: (spans: Parameters<typeof sink.export>[0]) => (fail ? Promise.reject(new Error('collector down')) : sink.export(spans)) };
    const errors: unknown[] = [];
    let now = Date.parse('2026-11-29T02:00:00.000Z');
    const ledger = tracingLedger(EmbeddedLedger.open(), { sink: failing, clock: { now: () => new Date(now) }, onError: (error) => errors.push(error) });
    await ledger.createRun(runRecord({ runId: 'r1' }));
    expect((await ledger.recordTurn(turn())).turn).toBe(1);
    fail = false;
    await ledger.recordTurn(turn({ turn: 2 }));
    expect(errors).toHaveLength(1);
    expect(exporter.getFinishedSpans()).toEqual([]); // dropped during the cooldown
    now += EXPORT_COOLDOWN_MS;
    await ledger.recordTurn(turn({ turn: 3 }));
    expect(exporter.getFinishedSpans().map((span) => span.spanContext().spanId)).toEqual([turnSpanId('r1', 3)]);
  });

  it('a collector that refuses the metrics costs the spans nothing: each signal has its own cooldown', async () => {
    const exporter = new InMemorySpanExporter();
    const spans = exporterSink(exporter, resourceFromAttributes({ 'service.name': 't' }));
    const measured: number[] = [];
    const sink = { ...spans, measure: async (points: readonly Measurement[]) => (measured.push(points.length), { error: new Error('404: no metrics pipeline') }) };
    const errors: unknown[] = [];
    const ledger = tracingLedger(EmbeddedLedger.open(), { sink, clock: { now: () => new Date('2026-11-29T02:00:00.000Z') }, onError: (error) => errors.push(error) });
    await ledger.createRun(runRecord({ runId: 'r1' }));
    await ledger.recordTurn(turn());
    await ledger.recordTurn(turn({ turn: 2 }));
    // The first turn's three points were sent and refused; the second's were held back by the cooldown.
    expect(measured).toEqual([3]);
    expect(errors).toHaveLength(1);
    expect(exporter.getFinishedSpans().map((span) => span.spanContext().spanId)).toEqual([turnSpanId('r1', 1), turnSpanId('r1', 2)]);
  });
});

describe('span links across traces and executions', () => {
  const ended = { status: 'succeeded' as const, finishedAt: '2026-11-29T03:00:00.000Z' };

  it("a fork's root links to the parent's turn it was forked after, and the parent's root to the fork", () => {
    const fork = runSpans(runRecord({ runId: 'child', ...ended, forkedFrom: { runId: 'parent', turn: 4, effects: 'dry' } }))[0]!;
    expect(fork.links).toEqual([
      { traceId: traceIdOf('parent'), spanId: turnSpanId('parent', 3), attributes: { 'savepoint.link': 'forked_from', 'savepoint.fork.run': 'parent', 'savepoint.fork.turn': 4, 'savepoint.fork.effects': 'dry' } },
    ]);
    expect(runSpans(runRecord({ runId: 'child', ...ended, forkedFrom: { runId: 'parent', turn: 1, effects: 'reuse' } }))[0]!.links[0]!.spanId).toBe(runSpanId('parent'));
    const parent = runSpans(runRecord({ runId: 'parent', ...ended, forks: [{ runId: 'child', turn: 4 }] }))[0]!;
    expect(parent.links).toEqual([{ traceId: traceIdOf('child'), spanId: runSpanId('child'), attributes: { 'savepoint.link': 'forked_to', 'savepoint.fork.run': 'child', 'savepoint.fork.turn': 4 } }]);
  });

  it('a migration links to the turn the migrated execution took the run over at; a run with no attachments recorded has no takeover spans', () => {
    const migration = { by: 'ops', at: '2026-11-29T02:30:00.000Z', from: { version: '1', fingerprint: 'f1', executionArn: 'arn:r' }, to: { version: '2', fingerprint: 'f2', executionArn: 'arn:r-v2' } };
    const spans = runSpans(runRecord({ ...ended, executions: ['arn:r', 'arn:r-v2'], migrations: [migration], attachments: [{ execution: 1, at: migration.at, modelTurns: 6 }] }));
    const migrate = spans.find((span) => span.name === 'savepoint.migrate')!;
    expect(migrate.links.map((link) => link.spanId)).toEqual([turnSpanId('r', 6)]);
    expect(migrate.attributes['savepoint.execution.index']).toBe(1);
    // The migration's execution is not also a resume.
    expect(spans.filter((span) => span.name === 'savepoint.resume')).toEqual([]);
    // Before attachments were recorded: the migration span without a link, and no resume span.
    const older = runSpans(runRecord({ ...ended, executions: ['arn:r', 'arn:r2'] }));
    expect(older.filter((span) => span.name.startsWith('savepoint.resume'))).toEqual([]);
  });
});

describe('tracing configuration from the standard variables', () => {
  it('is off unless an OTLP endpoint is set, and off when the SDK is disabled', () => {
    expect(tracingConfigFromEnv({})).toBeUndefined();
    expect(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeUndefined();
    expect(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_EXPORTER_OTLP_PROTOCOL: '' })?.protocol).toBe('http/protobuf');
    expect(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeUndefined();
    expect(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://127.0.0.1:4318/v1/traces' })).toEqual({ url: 'http://127.0.0.1:4318/v1/traces', headers: {}, protocol: 'http/protobuf', serviceName: 'savepoint', timeoutMs: 2000, content: false });
    expect(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://otlp.example.com/', OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20t0ken,x-team=a=b' })).toMatchObject({
      url: 'https://otlp.example.com/v1/traces',
      headers: { authorization: 'Bearer t0ken', 'x-team': 'a=b' },
    });
  });

  it('configures the GenAI metrics from the same variables, their _METRICS_ forms first, delta unless asked otherwise', () => {
    expect(metricsConfigFromEnv({})).toBeUndefined();
    expect(metricsConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_METRICS_EXPORTER: 'none' })).toBeUndefined();
    expect(metricsConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' })).toBeUndefined();
    expect(metricsConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318/', OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: 'http/json', OTEL_EXPORTER_OTLP_METRICS_HEADERS: 'x-team=a' })).toEqual({
      url: 'http://127.0.0.1:4318/v1/metrics', headers: { 'x-team': 'a' }, protocol: 'http/json', serviceName: 'savepoint', timeoutMs: 2000, temporality: 'delta',
    });
    expect(metricsConfigFromEnv({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://c:4318/m', OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'cumulative' })).toMatchObject({ url: 'http://c:4318/m', temporality: 'cumulative' });
    // Metrics without traces: the sink measures and exports no span.
    expect(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://c:4318/m' })).toBeUndefined();
    expect(sinkFromEnv({ OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: 'http://c:4318/m' })?.measure).toBeTypeOf('function');
    expect(sinkFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_METRICS_EXPORTER: 'none' })?.measure).toBeUndefined();
  });

  it('fails when a variable is malformed, naming it', () => {
    expect(() => metricsConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: 'sometimes' })).toThrow(/^OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: /);
    expect(() => tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://x', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toThrow(/^OTEL_EXPORTER_OTLP_PROTOCOL: /);
    expect(() => tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: 'not a url' })).toThrow(/^OTEL_EXPORTER_OTLP_ENDPOINT: /);
  });
});
