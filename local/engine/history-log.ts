import { closeSync, existsSync, openSync, readFileSync, renameSync, writeFileSync, writeSync } from 'node:fs';
import type { HistoryListener } from './local-engine.js';

/**
 * The Task events of the execution history, appended to a file as they happen. The local engine
 * keeps executions in memory: without this, what an execution did dies with its process. One JSON
 * line per event: the execution, the state, what happened (TaskScheduled is one Lambda invocation).
 *
 * The file is opened once, now: a line written later needs no new file descriptor, so a process
 * that has run out of them (thousands of idle connections on its loopback ports) still keeps every
 * event. A write that fails all the same is said (`onError`, once until writes work again) and
 * retried with the next event: never lost in silence.
 */
export function historyLog(file: string, options: { onError?: (error: unknown) => void } = {}): HistoryListener & { close(): void } {
  const fd = openSync(file, 'a', 0o600);
  // Per execution, the state of each event so far: a Task event's is the one it links back to
  // (previousEventId), not the last state entered — a turn's tool calls run side by side.
  const stateOf = new Map<string, Map<number, string>>();
  const unwritten: string[] = [];
  let failing = false;
  const listener: HistoryListener = (event) => {
    let states = stateOf.get(event.executionArn);
    if (!states) stateOf.set(event.executionArn, (states = new Map()));
    const state = event.stateEnteredEventDetails?.name ?? states.get(event.previousEventId);
    if (state !== undefined) states.set(event.id, state);
    if (event.type.startsWith('Execution') && event.type !== 'ExecutionStarted') stateOf.delete(event.executionArn);
    if (!event.type.startsWith('Task')) return;
    const failure = event.taskFailedEventDetails ?? event.taskTimedOutEventDetails;
    const line = { at: event.timestamp.toISOString(), execution: event.executionArn.split(':').pop(), state, type: event.type, ...(failure && { error: failure.error }) };
    unwritten.push(`${JSON.stringify(line)}\n`);
    try {
      // Synchronous: a line written is a line kept when the process is killed right after.
      while (unwritten.length > 0) {
        writeSync(fd, unwritten[0]!);
        unwritten.shift();
      }
      failing = false;
    } catch (error) {
      if (!failing) options.onError?.(error);
      failing = true;
    }
  };
  return Object.assign(listener, { close: () => closeSync(fd) });
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

/**
 * Rewrites the log without the lines of `executions` (execution names, the last part of their
 * ARNs): what `savepoint prune` removes of the runs it prunes. Written whole under another name and
 * renamed (a crash leaves the old log or the new one), private like the rest of a state directory.
 * Only while no engine appends to it: a writer keeps the old file open and its later lines would be
 * lost with it. A torn last line (a process killed mid-write) is kept as it was. Returns how many
 * lines went.
 */
export function dropExecutionsFromLog(file: string, executions: ReadonlySet<string>): number {
  if (executions.size === 0 || !existsSync(file)) return 0;
  const lines = readFileSync(file, 'utf8').split('\n');
  const kept = lines.filter((line) => !executions.has(executionOfLine(line) ?? ''));
  const dropped = lines.length - kept.length;
  if (dropped === 0) return 0;
  const draft = `${file}.${process.pid}.pruning`;
  writeFileSync(draft, kept.join('\n'), { mode: 0o600 });
  renameSync(draft, file);
  return dropped;
}

function executionOfLine(line: string): string | undefined {
  try {
    return (JSON.parse(line) as { execution?: string }).execution;
  } catch {
    return undefined;
  }
}
