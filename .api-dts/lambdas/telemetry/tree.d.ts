import type { SpanRecord } from './spans.js';
/**
 * A trace as an indented tree, one span a line, children in time order: what `savepoint trace
 * --print` shows when no collector is at hand.
 *
 *   invoke_agent refund-reconciler  12.3 s  in 4210 out 380 tokens  $0.0123
 *     chat claude-haiku-4-5  0.8 s  in 1200 out 40 tokens  $0.0010  tool_use
 *     execute_tool get_order  0.1 s  ok
 */
export declare function formatSpanTree(spans: readonly SpanRecord[]): string;
