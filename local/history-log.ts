import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import type { HistoryListener } from './engine.js';

/**
 * The Task events of the execution history, appended to a file as they happen. The local engine
 * keeps executions in memory: without this, what an execution did dies with its process. One JSON
 * line per event: the execution, the state, what happened (TaskScheduled is one Lambda invocation).
 */
export function historyLog(file: string): HistoryListener {
  const stateOf = new Map<string, string>();
  return (event) => {
    if (event.stateEnteredEventDetails) stateOf.set(event.executionArn, event.stateEnteredEventDetails.name);
    if (!event.type.startsWith('Task')) return;
    const failure = event.taskFailedEventDetails ?? event.taskTimedOutEventDetails;
    const line = { at: event.timestamp.toISOString(), execution: event.executionArn.split(':').pop(), state: stateOf.get(event.executionArn), type: event.type, ...(failure && { error: failure.error }) };
    // Synchronous: a line written is a line kept when the process is killed right after.
    appendFileSync(file, `${JSON.stringify(line)}\n`, { mode: 0o600 });
  };
}

/** Lambda invocations per state, over every process that wrote the log. */
export function invocationsInLog(file: string): Record<string, number> {
  const counts: Record<string, number> = {};
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line) continue;
    const event = JSON.parse(line) as { state?: string; type: string };
    if (event.type === 'TaskScheduled' && event.state) counts[event.state] = (counts[event.state] ?? 0) + 1;
  }
  return counts;
}
