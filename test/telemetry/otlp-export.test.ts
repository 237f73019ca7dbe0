import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Day } from '../../agents/refund-reconciler/domain.js';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { openLedger } from '../../cli/state.js';
import { inputTokensOf } from '../../lambdas/records/messages.js';
import { guaranteeOf } from '../../lambdas/define.js';
import type { ApprovalRecord, RunRecord, ToolCallRecord, TurnRecord } from '../../lambdas/records/ledger-records.js';
import { executionChain } from '../../lambdas/guards/history.js';
import { callSpanId, runSpanId, spanIdOf, traceIdOf, turnSpanId } from '../../lambdas/telemetry/spans.js';
import { savepoint, smallDay, workspace } from '../support/cli-process.js';
import { scratchDir } from '../support/scratch.js';
import { startOtlpReceiver, type ReceivedPoint, type ReceivedSpan, type Receiver } from '../support/otlp-receiver.js';

/**
 * The live export and `savepoint trace`, end to end: the CLI runs the sample day in its own
 * process with the standard OTEL_* variables pointing at a local OTLP/HTTP receiver, the official
 * exporter sends, the receiver decodes, and every figure is checked against the ledger.
 */

const runId = 'refunds-2026-11-28';
const sampleDay = JSON.parse(readFileSync(new URL('../../agents/refund-reconciler/sample-day.json', import.meta.url), 'utf8')) as Day;
const SECRET_HEADER = 'Bearer otlp-secret-7f3a9c';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(() => receiver.close());

const otel = (extra: Record<string, string> = {}) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_EXPORTER_OTLP_HEADERS: `authorization=${SECRET_HEADER}`,
  OTEL_SERVICE_NAME: 'refunds-nightly',
  ...extra,
});

async function recordsOf(stateDir: string) {
  const { ledger, close } = await openLedger(stateDir);
  try {
    const run = (await ledger.getRun(runId)) as RunRecord;
    const conversation = await ledger.listConversation(runId);
    const tokens = await Promise.all(conversation.approvals.map((approval) => ledger.getTaskToken(approval)));
    return { run, ...conversation, tokens: tokens.filter((token): token is string => token !== undefined) };
  } finally {
    await close();
  }
}

const ofRun = (spans: ReceivedSpan[]) => spans.filter((span) => span.traceId === traceIdOf(runId));
const named = (spans: ReceivedSpan[], operation: string) => spans.filter((span) => span.attributes['gen_ai.operation.name'] === operation);
/** A span as a comparable value: its identity, tree place, name, kind, times and attributes. */
const identity = (span: ReceivedSpan) => ({ ...span, resource: undefined, startNanos: String(span.startNanos), endNanos: String(span.endNanos) });
const byId = (spans: ReceivedSpan[]) => [...spans].sort((a, b) => a.spanId.localeCompare(b.spanId)).map(identity);
const strings = (span: ReceivedSpan) => [...Object.values(span.attributes), ...span.links.flatMap((link) => Object.values(link.attributes))].flat().map(String);

describe('OpenTelemetry GenAI traces', { timeout: 180_000 }, () => {
  let stateDir: string;
  let args: (...more: string[]) => string[];
  let live: ReceivedSpan[];
  let metrics: ReceivedPoint[];
  let records: Awaited<ReturnType<typeof recordsOf>>;

  beforeAll(async () => {
    ({ stateDir, args } = await workspace('otel-sample-day', sampleDay, { traced: true }));
    receiver.clear();
    const finished = await savepoint(args('run', '--json', '--approve', 'approve'), { env: otel() });
    expect(finished.code, finished.stderr).toBe(0);
    live = ofRun(receiver.spans);
    metrics = [...receiver.points];
    records = await recordsOf(stateDir);
  });

  it("the sample day's run exports one invoke_agent, one chat per model turn and one execute_tool per tool call, each a child of the run", () => {
    const { run, turns, calls } = records;
    expect(run.status).toBe('succeeded');
    expect(new Set(live.map((span) => span.spanId)).size).toBe(live.length);
    const [root, ...rootsBeyond] = named(live, 'invoke_agent');
    expect(rootsBeyond).toEqual([]);
    expect(root).toMatchObject({ name: 'invoke_agent refund-reconciler', spanId: runSpanId(runId), kind: 1 });
    expect(root!.parentSpanId).toBeUndefined();
    expect(root!.resource['service.name']).toBe('refunds-nightly');

    const chats = named(live, 'chat');
    expect(chats.map((span) => span.spanId).sort()).toEqual(turns.map((turn: TurnRecord) => turnSpanId(runId, turn.turn)).sort());
    const tools = named(live, 'execute_tool');
    expect(tools.map((span) => span.spanId).sort()).toEqual(calls.map((call: ToolCallRecord) => callSpanId(runId, call.turn, call.call)).sort());
    expect(turns.length).toBeGreaterThan(5);
    expect(calls.length).toBeGreaterThan(5);
    // Every other span hangs under the run's.
    for (const span of live.filter((one) => one !== root)) expect(span.parentSpanId, span.name).toBe(root!.spanId);
    for (const span of chats) expect(span).toMatchObject({ kind: 3, name: expect.stringMatching(/^chat /) });
    for (const span of tools) {
      expect(span.name).toBe(`execute_tool ${String(span.attributes['gen_ai.tool.name'])}`);
      const tool = refundReconciler.tools.find((one) => one.name === span.attributes['gen_ai.tool.name'])!;
      expect(span.attributes['savepoint.tool.guarantee']).toBe(guaranteeOf(tool));
    }
    // The approvals the run asked for are there, each decided and linked to the call it guards.
    const approvals = live.filter((span) => span.name.startsWith('savepoint.approval'));
    expect(approvals).toHaveLength(records.approvals.length);
    for (const approval of records.approvals as ApprovalRecord[]) {
      const span = approvals.find((one) => one.attributes['savepoint.approval.id'] === approval.approvalId)!;
      expect(span.attributes['savepoint.approval.decision']).toBe(approval.status);
      expect(span.links[0]?.spanId).toBe(callSpanId(runId, approval.turn, approval.call));
    }
  });

  it("token and cost attributes equal the ledger's figures, turn by turn and for the run", () => {
    const { run, turns } = records;
    for (const turn of turns as TurnRecord[]) {
      const span = live.find((one) => one.spanId === turnSpanId(runId, turn.turn))!;
      // The simulator names its answer as the Messages API does: an id of its own, the model it is.
      expect(turn).toMatchObject({ responseId: expect.stringMatching(/^msg_[0-9a-f]{24}$/), responseModel: 'savepoint-sim-1' });
      expect(span.attributes).toMatchObject({
        'gen_ai.provider.name': 'savepoint.sim',
        'gen_ai.request.model': turn.model.slice(turn.model.indexOf(':') + 1),
        'gen_ai.response.id': turn.responseId,
        'gen_ai.response.model': turn.responseModel,
        'gen_ai.conversation.id': runId,
        'gen_ai.usage.input_tokens': inputTokensOf(turn.usage),
        'gen_ai.usage.output_tokens': turn.usage.output_tokens,
        'gen_ai.usage.cache_read.input_tokens': turn.usage.cache_read_input_tokens ?? 0,
        'gen_ai.usage.cache_creation.input_tokens': turn.usage.cache_creation_input_tokens ?? 0,
        'savepoint.cost.usd': turn.costMicros / 1e6,
      });
    }
    const chats = named(live, 'chat');
    const sum = (key: string) => chats.reduce((total, span) => total + Number(span.attributes[key]), 0);
    expect(sum('gen_ai.usage.input_tokens')).toBe(run.inputTokens);
    expect(sum('gen_ai.usage.output_tokens')).toBe(run.outputTokens);
    expect(sum('gen_ai.usage.cache_read.input_tokens')).toBe(run.cachedInputTokens);
    expect(Math.round(sum('savepoint.cost.usd') * 1e6)).toBe(run.costMicros);
    const root = named(live, 'invoke_agent')[0]!;
    expect(root.attributes).toMatchObject({
      'gen_ai.agent.name': 'refund-reconciler',
      'gen_ai.usage.input_tokens': run.inputTokens,
      'gen_ai.usage.output_tokens': run.outputTokens,
      'savepoint.cost.usd': run.costMicros / 1e6,
      'savepoint.steps': run.steps,
      'savepoint.budget.remaining.steps': run.config.maxSteps - run.steps,
      'savepoint.status': 'succeeded',
    });
  });

  it("each chat span's finish reason is one of the conventions' values, not the provider's stop reason", () => {
    // The conventions' FinishReason: stop, length, content_filter, tool_call, error.
    const conventions: Record<string, string> = { end_turn: 'stop', stop_sequence: 'stop', max_tokens: 'length', tool_use: 'tool_call' };
    const turns = records.turns as TurnRecord[];
    expect(new Set(turns.map((turn) => turn.stopReason))).toEqual(new Set(['tool_use', 'end_turn']));
    for (const turn of turns) {
      const span = live.find((one) => one.spanId === turnSpanId(runId, turn.turn))!;
      expect(span.attributes['gen_ai.response.finish_reasons'], `turn ${turn.turn}`).toEqual([conventions[turn.stopReason]]);
    }
  });

  it("one savepoint.budget_check per turn it let through and one that ended the run, its figures the ledger's", () => {
    const { run, turns } = records;
    const checks = live.filter((span) => span.name === 'savepoint.budget_check');
    const modelTurns = (turns as TurnRecord[]).filter((turn) => !turn.compaction);
    expect(checks).toHaveLength(modelTurns.length + 1);
    for (const turn of modelTurns) {
      const check = checks.find((span) => span.spanId === spanIdOf(runId, `budget_check/${turn.turn}`))!;
      const before = (turns as TurnRecord[]).filter((one) => one.turn < turn.turn);
      expect(check.attributes).toMatchObject({
        'savepoint.budget_check.verdict': 'continue',
        'savepoint.turn': turn.turn,
        'savepoint.budget.used.tokens': before.reduce((sum, one) => sum + inputTokensOf(one.usage) + one.usage.output_tokens, 0),
        'savepoint.budget.remaining.tokens': run.config.maxTokens - before.reduce((sum, one) => sum + inputTokensOf(one.usage) + one.usage.output_tokens, 0),
      });
      // The check ended before the model call it let through began.
      const chat = live.find((span) => span.spanId === turnSpanId(runId, turn.turn))!;
      expect(check.endNanos).toBeLessThanOrEqual(chat.startNanos);
      expect(check.startNanos).toBeLessThanOrEqual(check.endNanos);
    }
    // The last check saw the run's own counters, and ended it.
    const last = checks.find((span) => span.spanId === spanIdOf(runId, 'budget_check/end'))!;
    expect(last.attributes).toMatchObject({
      'savepoint.budget_check.verdict': 'succeeded',
      'savepoint.budget.used.steps': run.steps,
      'savepoint.budget.remaining.steps': run.config.maxSteps - run.steps,
      'savepoint.budget.used.tokens': run.inputTokens + run.outputTokens,
      'savepoint.budget.used.usd': run.costMicros / 1e6,
    });
  });

  it("the run's GenAI metrics (gen_ai.client.token.usage, gen_ai.client.operation.duration) equal the ledger's figures", () => {
    const { run, turns, calls } = records;
    const points = metrics.filter((point) => point.resource['service.name'] === 'refunds-nightly');
    for (const point of points) expect(point.temporality, point.metric).toBe(1); // delta: the points add up across processes
    const tokens = (type: string) => points.filter((point) => point.metric === 'gen_ai.client.token.usage' && point.attributes['gen_ai.token.type'] === type);
    const total = (list: ReceivedPoint[]) => list.reduce((sum, point) => sum + point.sum, 0);
    const count = (list: ReceivedPoint[]) => list.reduce((sum, point) => sum + point.count, 0);
    // Cached tokens inside the input (the conventions' rule): the run's input counter is that sum.
    expect(total(tokens('input'))).toBe(run.inputTokens);
    expect(total(tokens('output'))).toBe(run.outputTokens);
    expect(count(tokens('input'))).toBe(turns.length);
    expect(count(tokens('output'))).toBe(turns.length);
    for (const point of tokens('input')) {
      expect(point).toMatchObject({ unit: '{token}', explicitBounds: [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864] });
      expect(point.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'savepoint.sim' });
    }
    const durations = (operation: string) => points.filter((point) => point.metric === 'gen_ai.client.operation.duration' && point.attributes['gen_ai.operation.name'] === operation);
    expect(count(durations('chat'))).toBe(turns.length);
    expect(total(durations('chat'))).toBeCloseTo(turns.reduce((sum: number, turn: TurnRecord) => sum + turn.latencyMs / 1000, 0), 9);
    const ran = (calls as ToolCallRecord[]).filter((call) => call.status === 'completed' && call.outcome !== 'rejected' && call.outcome !== 'expired');
    expect(count(durations('execute_tool'))).toBe(ran.length);
    expect(total(durations('execute_tool'))).toBeCloseTo(ran.reduce((sum, call) => sum + (call.latencyMs ?? 0) / 1000, 0), 9);
    for (const point of durations('chat')) expect(point).toMatchObject({ unit: 's', explicitBounds: [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92] });
  });

  it('no attribute holds an idempotency key, a task token or a secret, and no content without the opt-in', () => {
    const { calls, tokens } = records;
    const seal = readFileSync(join(stateDir, 'keys', 'ledger-seal.key'));
    const forbidden = [
      ...calls.map((call: ToolCallRecord) => call.idempotencyKey),
      ...tokens,
      SECRET_HEADER,
      'otlp-secret-7f3a9c',
      seal.toString('base64'),
      seal.toString('hex'),
      seal.toString('utf8').trim(),
    ].filter((text) => text.length >= 8);
    expect(calls.length).toBeGreaterThan(0);
    expect(tokens.length).toBe(records.approvals.length);
    for (const span of live) for (const value of strings(span)) for (const secret of forbidden) expect(value, `${span.name}`).not.toContain(secret);
    // The header reached the collector, as the standard variable asked.
    expect(receiver.requests.some((request) => request.headers['authorization'] === SECRET_HEADER)).toBe(true);
    const content = ['gen_ai.input.messages', 'gen_ai.output.messages', 'gen_ai.tool.call.arguments', 'gen_ai.tool.call.result'];
    for (const span of live) for (const key of content) expect(span.attributes[key], `${span.name} ${key}`).toBeUndefined();
  });

  it('savepoint trace <runId> exports the same span ids and attributes as the live export', async () => {
    receiver.clear();
    const traced = await savepoint(['--state-dir', stateDir, 'trace', runId], { env: otel() });
    expect(traced.code, traced.stderr).toBe(0);
    expect(traced.stderr).toContain(`${live.length} spans of run ${runId} exported`);
    expect(byId(ofRun(receiver.spans))).toEqual(byId(live));
  });

  it('content attributes appear with the opt-in (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT)', async () => {
    receiver.clear();
    const traced = await savepoint(['--state-dir', stateDir, 'trace', runId], { env: otel({ OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' }) });
    expect(traced.code, traced.stderr).toBe(0);
    const spans = ofRun(receiver.spans);
    const call = records.calls[0] as ToolCallRecord;
    const tool = spans.find((span) => span.spanId === callSpanId(runId, call.turn, call.call))!;
    expect(JSON.parse(String(tool.attributes['gen_ai.tool.call.arguments']))).toEqual(call.args);
    expect(tool.attributes['gen_ai.tool.call.result']).toBe(call.result);
    const chat = spans.find((span) => span.spanId === turnSpanId(runId, 1))!;
    // The conventions' output message: parts `{ type: 'text', content }` and `{ type: 'tool_call', id, name, arguments }`, their finish reason.
    const turn = records.turns.find((one: TurnRecord) => one.turn === 1) as TurnRecord;
    const parts = turn.content.map((block) => (block.type === 'text' ? { type: 'text', content: block.text } : block.type === 'tool_use' ? { type: 'tool_call', id: block.id, name: block.name, arguments: block.input } : block));
    expect(parts.some((part) => part.type === 'tool_call')).toBe(true);
    expect(JSON.parse(String(chat.attributes['gen_ai.output.messages']))).toEqual([{ role: 'assistant', parts, finish_reason: 'tool_call' }]);
    // Still never a key, even with content on.
    for (const span of spans) for (const value of strings(span)) for (const known of records.calls) expect(value).not.toContain((known as ToolCallRecord).idempotencyKey);
  });

  it('exports protobuf by default (OTEL_EXPORTER_OTLP_PROTOCOL unset): every span id is in the request', async () => {
    receiver.clear();
    const { OTEL_EXPORTER_OTLP_PROTOCOL: _json, ...protobuf } = otel();
    const traced = await savepoint(['--state-dir', stateDir, 'trace', runId], { env: { ...protobuf, OTEL_EXPORTER_OTLP_PROTOCOL: '' } });
    expect(traced.code, traced.stderr).toBe(0);
    // One request, of spans: `savepoint trace` sends no metrics (they were counted as the run went).
    expect(receiver.requests.map((request) => [request.url, request.contentType])).toEqual([['/v1/traces', 'application/x-protobuf']]);
    const body = receiver.requests[0]!.body;
    expect(body.includes(Buffer.from(traceIdOf(runId), 'hex'))).toBe(true);
    for (const span of live) expect(body.includes(Buffer.from(span.spanId, 'hex')), span.name).toBe(true);
  });

  it('savepoint trace with no endpoint configured prints the span tree', async () => {
    const printed = await savepoint(['--state-dir', stateDir, 'trace', runId]);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stderr).toContain('no OTLP endpoint configured');
    const lines = printed.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^invoke_agent refund-reconciler {2}/);
    expect(lines.filter((line) => line.startsWith('  chat '))).toHaveLength(records.turns.length);
    expect(lines.filter((line) => line.startsWith('  execute_tool '))).toHaveLength(records.calls.length);
  });

  it('a bad OTEL_* variable is the user\'s setting: `trace` and `run` refuse it first, naming it (exit 2), and `run` makes no state directory', async () => {
    const bad = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' };
    const message = /^savepoint: OTEL_EXPORTER_OTLP_PROTOCOL: Invalid option: expected one of "http\/protobuf"\|"http\/json"\n$/;
    expect(await savepoint(['--state-dir', stateDir, 'trace', runId], { env: bad })).toMatchObject({ code: 2, stderr: expect.stringMatching(message) });
    const fresh = `${stateDir}-never-made`;
    expect(await savepoint(['--state-dir', fresh, 'run', '--agent', 'refund-reconciler'], { env: bad })).toMatchObject({ code: 2, stdout: '', stderr: expect.stringMatching(message) });
    expect(existsSync(fresh)).toBe(false);
  });

  it("a fork's trace links to the parent's turn it was forked after, the parent's back to the fork, live and rebuilt alike", async () => {
    // A parent of its own: a fork adds its lineage to the parent's record (and so a link to the
    // parent's root), which the other tests' traces of the sample day's run would then show. Of a
    // smaller day than the sample day (smallDay): the same links, at turn 4 of a run of more turns.
    const parent = await workspace('otel-fork-parent', smallDay, { traced: true });
    receiver.clear();
    const ran = await savepoint(parent.args('run', '--json', '--approve', 'approve'), { env: otel() });
    expect(ran.code, ran.stderr).toBe(0);
    const parentLive = ofRun(receiver.spans);
    receiver.clear();
    const fork = 'refunds-fork-4';
    // The state directory keeps the day the parent ran on: the fork's simulated world serves it again.
    const forked = await savepoint(['--state-dir', parent.stateDir, 'fork', runId, '--at', '4', '--effects', 'dry', '--run-id', fork, '--yes', '--approve', 'approve', '--agent', 'refund-reconciler'], { env: otel() });
    expect(forked.code, forked.stderr).toBe(0);
    const forkRoot = receiver.spans.find((span) => span.traceId === traceIdOf(fork) && span.spanId === runSpanId(fork))!;
    expect(forkRoot.links).toEqual([
      { traceId: traceIdOf(runId), spanId: turnSpanId(runId, 3), attributes: { 'savepoint.link': 'forked_from', 'savepoint.fork.run': runId, 'savepoint.fork.turn': 4, 'savepoint.fork.effects': 'dry' } },
    ]);
    // The parent's span it links to is one the parent's trace holds.
    expect(parentLive.some((span) => span.spanId === turnSpanId(runId, 3))).toBe(true);
    const liveFork = receiver.spans.filter((span) => span.traceId === traceIdOf(fork));
    receiver.clear();
    expect((await savepoint(['--state-dir', parent.stateDir, 'trace', fork], { env: otel() })).code).toBe(0);
    expect(byId(receiver.spans.filter((span) => span.traceId === traceIdOf(fork)))).toEqual(byId(liveFork));
    receiver.clear();
    expect((await savepoint(['--state-dir', parent.stateDir, 'trace', runId], { env: otel() })).code).toBe(0);
    const parentRoot = ofRun(receiver.spans).find((span) => span.spanId === runSpanId(runId))!;
    expect(parentRoot.links).toEqual([{ traceId: traceIdOf(fork), spanId: runSpanId(fork), attributes: { 'savepoint.link': 'forked_to', 'savepoint.fork.run': fork, 'savepoint.fork.turn': 4 } }]);
  });
});

describe('a run whose tool calls fail, and then the run', { timeout: 120_000 }, () => {
  // failing-note: its read is called with arguments its schema refuses (answered `invalid_arguments`),
  // then its write throws a TerminalError (recorded `terminal`, and the run fails with Agent.Terminal).
  const agent = new URL('./fixtures/failing-note.dev.ts', import.meta.url).pathname;
  const failing = 'traced-failure';
  let spans: ReceivedSpan[];
  let points: ReceivedPoint[];

  beforeAll(async () => {
    const stateDir = join(scratchDir('savepoint-otel-failure-'), 'state');
    receiver.clear();
    const ran = await savepoint(['--state-dir', stateDir, 'run', '--run-id', failing, '--input', JSON.stringify({ text: 'lunch at noon' }), '--json', '--agent', agent], {
      env: otel({ OTEL_SERVICE_NAME: 'failing-notes' }),
    });
    expect(ran.code, ran.stderr).toBe(1);
    spans = receiver.spans.filter((span) => span.traceId === traceIdOf(failing));
    points = receiver.points.filter((point) => point.resource['service.name'] === 'failing-notes');
  });

  it("an execute_tool span that answered an error has status ERROR and error.type, the code the call recorded, as its duration point has", () => {
    const tools = named(spans, 'execute_tool');
    expect(tools.map((span) => [span.name, span.status.code, span.attributes['error.type']])).toEqual([
      ['execute_tool find_note', 2, 'invalid_arguments'],
      ['execute_tool save_note', 2, 'terminal'],
    ]);
    const durations = points.filter((point) => point.metric === 'gen_ai.client.operation.duration' && point.attributes['gen_ai.operation.name'] === 'execute_tool');
    expect(durations.map((point) => [point.attributes['gen_ai.tool.name'], point.attributes['error.type']]).sort()).toEqual([
      ['find_note', 'invalid_arguments'],
      ['save_note', 'terminal'],
    ]);
  });

  it("a failed run's invoke_agent span has status ERROR and error.type, the error the run failed with", () => {
    const [root] = named(spans, 'invoke_agent');
    expect(root).toMatchObject({ name: 'invoke_agent failing-note', status: { code: 2 } });
    expect(root!.attributes['error.type']).toBe('Agent.Terminal');
    // The model turns ended well: no error on them.
    for (const chat of named(spans, 'chat')) expect(chat.attributes['error.type'], chat.name).toBeUndefined();
  });
});

describe('a run killed mid-way and resumed', { timeout: 240_000 }, () => {
  // One plain refund and one mismatch: issue_refund, flag_for_review and post_report once each.
  const day = makeSampleDay(7, { plain: 1, already_refunded: 0, mismatch: 1, large: 0 });

  it('exports the same ids for the steps before each kill, and exactly one execute_tool marked executed per write', async () => {
    const { stateDir, args } = await workspace('otel-crash', day, { traced: true });
    receiver.clear();
    // Killed after the review was recorded, then after the refund was paid and before it was recorded.
    const first = await savepoint(args('run', '--json', '--crash-at', 'after-record:flag_for_review'), { env: otel() });
    expect(first.signal, first.stderr).toBe('SIGKILL');
    const beforeFirstKill = ofRun(receiver.spans).map(identity);
    const second = await savepoint(args('resume', runId, '--json', '--crash-at', 'after-commit:issue_refund'), { env: otel() });
    expect(second.signal, second.stderr).toBe('SIGKILL');
    const beforeSecondKill = ofRun(receiver.spans).map(identity);
    const finished = await savepoint(args('resume', runId, '--json'), { env: otel() });
    expect(finished.code, finished.stderr).toBe(0);
    const received = ofRun(receiver.spans);
    const measured = [...receiver.points];

    // What was exported before each kill is, id for id and attribute for attribute, in the trace
    // rebuilt from the ledger at the end.
    receiver.clear();
    expect((await savepoint(['--state-dir', stateDir, 'trace', runId], { env: otel() })).code).toBe(0);
    const rebuilt = new Map(ofRun(receiver.spans).map((span) => [span.spanId, identity(span)]));
    expect(beforeFirstKill.length).toBeGreaterThan(2);
    // A replay span is live only (no record says a retry found its step done): each of those is
    // marked not executed and links to a rebuilt span. The first resume meets one, the review the
    // first process recorded and counted before it was killed.
    const isReplay = (span: { attributes: Record<string, unknown> }) => span.attributes['savepoint.replay'] === true;
    const replays = received.filter(isReplay);
    expect(replays.map((span) => span.name)).toContain('execute_tool flag_for_review');
    for (const span of replays) {
      expect(span.attributes['savepoint.executed'], span.name).toBe(false);
      expect(rebuilt.has(span.links[0]!.spanId), span.name).toBe(true);
    }
    for (const span of [...beforeFirstKill, ...beforeSecondKill].filter((one) => !isReplay(one))) expect(rebuilt.get(span.spanId), span.name).toEqual(span);
    // And no other span the live export sent is missing from it.
    for (const span of received.filter((one) => !isReplay(one))) expect(rebuilt.has(span.spanId), span.name).toBe(true);

    const { calls, run, turns } = await recordsOf(stateDir);
    // Metrics: a turn is measured by the attempt that wrote it, once, across the three processes.
    // The kills came after a tool call's write, never a turn's: every turn is measured exactly once.
    const input = measured.filter((point) => point.metric === 'gen_ai.client.token.usage' && point.attributes['gen_ai.token.type'] === 'input');
    expect(input.reduce((sum, point) => sum + point.count, 0)).toBe(turns.length);
    expect(input.reduce((sum, point) => sum + point.sum, 0)).toBe(run.inputTokens);
    // Each resume is a span linked to the last turn the run had recorded when it took over, and
    // `savepoint trace` gives it back as it was sent.
    const resumes = received.filter((span) => span.name === 'savepoint.resume');
    expect(resumes).toHaveLength(executionChain(run).filter((execution) => execution.via === 'resume').length);
    expect(resumes).toHaveLength(2);
    for (const attachment of run.attachments!) {
      const span = resumes.find((one) => one.spanId === spanIdOf(runId, `execution/${attachment.execution}`))!;
      expect(span.links).toEqual([{ traceId: traceIdOf(runId), spanId: attachment.modelTurns > 0 ? turnSpanId(runId, attachment.modelTurns) : runSpanId(runId), attributes: { 'savepoint.link': 'continues', 'savepoint.turn': attachment.modelTurns } }]);
      expect(rebuilt.get(span.spanId)).toEqual(identity(span));
    }
    const writes = calls.filter((call: ToolCallRecord) => call.effect === 'write');
    expect(writes.map((call: ToolCallRecord) => call.name).sort()).toEqual(['flag_for_review', 'issue_refund', 'post_report']);
    for (const write of writes as ToolCallRecord[]) {
      const executed = named(received, 'execute_tool').filter(
        (span) => span.attributes['savepoint.turn'] === write.turn && span.attributes['savepoint.call'] === write.call && span.attributes['savepoint.executed'] === true,
      );
      expect(executed, write.name).toHaveLength(1);
      expect(executed[0]!.spanId).toBe(callSpanId(runId, write.turn, write.call));
    }
    // The refund was claimed twice (the dead process's claim was taken over): one span says so.
    const refund = writes.find((call: ToolCallRecord) => call.name === 'issue_refund')!;
    expect(rebuilt.get(callSpanId(runId, refund.turn, refund.call))!.attributes['savepoint.attempt']).toBe(refund.attempts);
    expect(refund.attempts).toBeGreaterThanOrEqual(2);
  });
});
