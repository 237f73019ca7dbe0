import type { SpanRecord } from './spans.js';

/**
 * A trace as an indented tree, one span a line, children in time order: what `savepoint trace
 * --print` shows when no collector is at hand.
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
    // Of siblings that start in the same millisecond, the one that ends first first: a turn's budget
    // check ends where its model call starts, and on a fast machine both fall in one millisecond.
    const order = [...(children.get(parent) ?? [])].sort((a, b) => a.startMs - b.startMs || a.endMs - b.endMs || a.name.localeCompare(b.name));
    for (const span of order) {
      lines.push(`${'  '.repeat(depth)}${describe(span)}`);
      walk(span.spanId, depth + 1);
    }
  };
  walk(undefined, 0);
  return lines.join('\n');
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
