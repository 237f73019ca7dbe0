import type { SpanRecord } from './spans.js';

/**
 * A trace as an indented tree, one span a line, children in time order (a turn's calls in the
 * order the model asked for them): what `savepoint trace --print` shows when no collector is at hand.
 *
 *   invoke_agent refund-reconciler  12.3 s  in 4210 out 380 tokens  $0.0123
 *     chat claude-haiku-4-5  0.8 s  in 1200 out 40 tokens  $0.0010  tool_call
 *     execute_tool get_order  0.1 s  ok
 */
export function formatSpanTree(spans: readonly SpanRecord[]): string {
  const children = new Map<string | undefined, SpanRecord[]>();
  const ids = new Set(spans.map((span) => span.spanId));
  for (const span of spans) {
    const parent = span.parentSpanId !== undefined && ids.has(span.parentSpanId) ? span.parentSpanId : undefined;
    children.set(parent, [...(children.get(parent) ?? []), span]);
  }
  const lines: string[] = [];
  const walk = (parent: string | undefined, depth: number) => {
    const siblings = children.get(parent) ?? [];
    // A turn's calls run side by side and start in whatever order they are scheduled: they are shown
    // together, where the first of them started, in the order the model asked for them.
    const turnStart = new Map<unknown, number>();
    for (const span of siblings) if (callOf(span)) turnStart.set(span.attributes['savepoint.turn'], Math.min(turnStart.get(span.attributes['savepoint.turn']) ?? Infinity, span.startMs));
    const startOf = (span: SpanRecord) => (callOf(span) ? turnStart.get(span.attributes['savepoint.turn'])! : span.startMs);
    const sameTurn = (a: SpanRecord, b: SpanRecord) => callOf(a) && callOf(b) && a.attributes['savepoint.turn'] === b.attributes['savepoint.turn'];
    // Of other siblings that start in the same millisecond, the one that ends first first: a turn's
    // budget check ends where its model call starts, and on a fast machine both fall in one millisecond.
    const order = [...siblings].sort(
      (a, b) => startOf(a) - startOf(b) || (sameTurn(a, b) ? callOf(a)! - callOf(b)! : a.endMs - b.endMs || a.name.localeCompare(b.name)),
    );
    for (const span of order) {
      lines.push(`${'  '.repeat(depth)}${describe(span)}`);
      walk(span.spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
}

/** A tool call's position in its turn (`savepoint.call`, from 1), or undefined for any other span. */
function callOf(span: SpanRecord): number | undefined {
  const call = span.attributes['savepoint.call'];
  return span.name.startsWith('execute_tool ') && typeof call === 'number' ? call : undefined;
}

function describe(span: SpanRecord): string {
  const a = span.attributes;
  const parts = [span.name, `${((span.endMs - span.startMs) / 1000).toFixed(3)} s`];
  if (a['gen_ai.usage.input_tokens'] !== undefined) parts.push(`in ${String(a['gen_ai.usage.input_tokens'])} out ${String(a['gen_ai.usage.output_tokens'])} tokens`);
  if (typeof a['savepoint.cost.usd'] === 'number') parts.push(`$${a['savepoint.cost.usd'].toFixed(6)}`);
  const finish = a['gen_ai.response.finish_reasons'];
  if (Array.isArray(finish)) parts.push(finish.join(','));
  if (a['savepoint.budget_check.verdict'] !== undefined) parts.push(`${String(a['savepoint.budget_check.verdict'])}, ${String(a['savepoint.budget.remaining.steps'])} steps left`);
  for (const key of ['savepoint.tool.outcome', 'savepoint.approval.decision', 'savepoint.guard.action', 'savepoint.status', 'savepoint.execution.via'] as const) {
    if (a[key] !== undefined) parts.push(String(a[key]));
  }
  if (a['savepoint.attempt'] !== undefined && Number(a['savepoint.attempt']) > 1) parts.push(`attempt ${String(a['savepoint.attempt'])}`);
  if (a['savepoint.executed'] === false) parts.push('not executed');
  return parts.join('  ');
}
