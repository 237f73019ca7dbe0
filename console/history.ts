import { existsSync, readFileSync, statSync } from 'node:fs';
import type { AslDefinition } from '../local/template/asl.js';
import type { HistoryEvent } from '../local/engine/local-engine.js';

/**
 * What the console reads of the execution history: one line per event, in the shape the state
 * directory's `history.jsonl` keeps (local/engine/history-log.ts), so that executions of this process (the
 * engine's full history) and of earlier processes (the log's Task events) read the same.
 */
export interface HistoryLine {
  at: string;
  /** The execution's name (the last part of its ARN). */
  execution: string;
  state?: string;
  /** `StateEntered`, `TaskScheduled`, `TaskSucceeded`, `TaskFailed`, `TaskTimedOut`, `ExecutionStarted`, … */
  type: string;
  error?: string;
}

/**
 * Where the console finds executions: the running engine, the state directory's log, or both;
 * on a deployed stack, the Step Functions API (console/stack.ts), hence the promises.
 */
export interface HistorySource {
  /** The lines of one execution (by ARN), oldest first; empty when nothing is known of it. */
  linesOf(executionArn: string, ask?: HistoryAsk): HistoryLine[] | Promise<HistoryLine[]>;
  /** The status of the execution (`RUNNING`, `SUCCEEDED`, …), if known here. */
  statusOf?(executionArn: string, ask?: HistoryAsk): string | undefined | Promise<string | undefined>;
}

/** What the asker knows of an execution's run, for a source that keeps what it read (console/stack.ts). */
export interface HistoryAsk {
  /**
   * The run has ended (its ledger record is no longer `running`): a copy of the execution's
   * history read while it ran may lack its end, so it is read again rather than served.
   */
  readonly runEnded?: boolean;
}

/** What linesFromEngine reads of a history event: the local engine's and the Step Functions API's alike. */
export interface HistoryEventLike {
  id?: number | undefined;
  previousEventId?: number | undefined;
  timestamp?: Date | undefined;
  type?: string | undefined;
  stateEnteredEventDetails?: { name?: string | undefined } | undefined;
  taskFailedEventDetails?: { error?: string | undefined } | undefined;
  taskTimedOutEventDetails?: { error?: string | undefined } | undefined;
  executionFailedEventDetails?: { error?: string | undefined } | undefined;
  executionAbortedEventDetails?: { error?: string | undefined } | undefined;
}

export const executionName = (arn: string) => arn.split(':').pop() ?? arn;

/** An execution's full history (the engine's or the Step Functions API's), as history lines (StateEntered included). */
export function linesFromEngine(arn: string, events: readonly HistoryEventLike[]): HistoryLine[] {
  const name = executionName(arn);
  const lines: HistoryLine[] = [];
  // The state of a Task event is the one it links back to (previousEventId): a turn's tool calls
  // run side by side, so the last state entered may be another call's. Without ids, the last one.
  const stateOf = new Map<number, string | undefined>();
  let last: string | undefined;
  for (const event of events) {
    const at = (event.timestamp ?? new Date(0)).toISOString();
    const type = event.type ?? '';
    const linked = event.previousEventId !== undefined && stateOf.has(event.previousEventId) ? stateOf.get(event.previousEventId) : last;
    const state = event.stateEnteredEventDetails ? event.stateEnteredEventDetails.name : linked;
    if (event.id !== undefined) stateOf.set(event.id, state);
    if (event.stateEnteredEventDetails) {
      last = state;
      lines.push({ at, execution: name, ...(state && { state }), type: 'StateEntered' });
      continue;
    }
    const failure = event.taskFailedEventDetails ?? event.taskTimedOutEventDetails ?? event.executionFailedEventDetails ?? event.executionAbortedEventDetails;
    if (type.startsWith('Task') || type.startsWith('Execution')) {
      lines.push({ at, execution: name, ...(state && type.startsWith('Task') && { state }), type, ...(failure?.error && { error: failure.error }) });
    }
  }
  return lines;
}

/** The status an execution's history ends in: its terminal event's, else RUNNING (undefined without events). */
export function statusFromLines(lines: readonly HistoryLine[]): string | undefined {
  const TERMINAL: Record<string, string> = { ExecutionSucceeded: 'SUCCEEDED', ExecutionFailed: 'FAILED', ExecutionTimedOut: 'TIMED_OUT', ExecutionAborted: 'ABORTED' };
  if (lines.length === 0) return undefined;
  for (let i = lines.length - 1; i >= 0; i--) {
    const status = TERMINAL[lines[i]!.type];
    if (status) return status;
  }
  return 'RUNNING';
}

/** The state directory's `history.jsonl`, re-read only when it grew. */
export function historyFile(file: string): (execution: string) => HistoryLine[] {
  let size = -1;
  let byExecution = new Map<string, HistoryLine[]>();
  return (execution) => {
    if (!existsSync(file)) return [];
    const now = statSync(file).size;
    if (now !== size) {
      size = now;
      byExecution = new Map();
      for (const text of readFileSync(file, 'utf8').split('\n')) {
        if (!text) continue;
        try {
          const line = JSON.parse(text) as HistoryLine;
          const list = byExecution.get(line.execution) ?? [];
          list.push(line);
          byExecution.set(line.execution, list);
        } catch {
          // a torn last line (a process killed mid-write): skipped
        }
      }
    }
    return byExecution.get(execution) ?? [];
  };
}

/** The engine this process runs, falling back to the log for executions it does not know. */
export function historySource(options: {
  engine?: { getExecutionHistory(arn: string): HistoryEvent[]; describeExecution(arn: string): { status: string } };
  file?: string;
}): HistorySource {
  const fromFile = options.file ? historyFile(options.file) : () => [];
  const known = (arn: string) => {
    try {
      return options.engine?.describeExecution(arn);
    } catch {
      return undefined; // not an execution of this process
    }
  };
  return {
    linesOf(arn) {
      if (options.engine && known(arn)) return linesFromEngine(arn, options.engine.getExecutionHistory(arn));
      return fromFile(executionName(arn));
    },
    statusOf: (arn) => known(arn)?.status,
  };
}

/** Several engines' executions as one source (serve with several agents: an engine each): an execution is found in the one that knows it. */
export function severalHistories(sources: readonly HistorySource[]): HistorySource {
  return {
    async linesOf(arn, ask) {
      for (const source of sources) {
        const lines = await source.linesOf(arn, ask);
        if (lines.length > 0) return lines;
      }
      return [];
    },
    async statusOf(arn, ask) {
      for (const source of sources) {
        const status = await source.statusOf?.(arn, ask);
        if (status !== undefined) return status;
      }
      return undefined;
    },
  };
}

export interface StateCounts {
  entered: number;
  retried: number;
  failed: number;
  errors: Record<string, number>;
}

/**
 * Per state: times entered, retries (an invocation after a failed one within the same entry), and
 * failed invocations by error name. The log has no StateEntered lines: there an invocation that
 * does not follow a failure of the same state starts an entry.
 */
export function countStates(executions: readonly HistoryLine[][]): Record<string, StateCounts> {
  const counts: Record<string, StateCounts> = {};
  const of = (state: string) => (counts[state] ??= { entered: 0, retried: 0, failed: 0, errors: {} });
  for (const lines of executions) {
    const hasEntries = lines.some((line) => line.type === 'StateEntered');
    let lastFailed: string | undefined;
    for (const line of lines) {
      if (!line.state) continue;
      if (line.type === 'StateEntered') {
        of(line.state).entered++;
        lastFailed = undefined;
      } else if (line.type === 'TaskScheduled') {
        if (lastFailed === line.state) of(line.state).retried++;
        else if (!hasEntries) of(line.state).entered++;
        lastFailed = undefined;
      } else if (line.type === 'TaskFailed' || line.type === 'TaskTimedOut') {
        const state = of(line.state);
        state.failed++;
        state.errors[line.error ?? 'unknown'] = (state.errors[line.error ?? 'unknown'] ?? 0) + 1;
        lastFailed = line.state;
      }
    }
  }
  return counts;
}

/**
 * The state an execution is in, if it is still running: a Task waiting on its token (a person's
 * approval) if there is one — a turn's other tool calls may go on beside it — else the last state
 * entered or invoked.
 */
export function currentState(lines: readonly HistoryLine[]): string | undefined {
  const latest = new Map<string, string>();
  let last: string | undefined;
  for (let i = lines.length - 1; i >= 0; i--) {
    const line = lines[i]!;
    if (line.type.startsWith('Execution') && line.type !== 'ExecutionStarted') {
      if (last === undefined) return undefined;
      break;
    }
    if (!line.state) continue;
    last ??= line.state;
    if (!latest.has(line.state)) latest.set(line.state, line.type);
  }
  const waiting = [...latest].find(([, type]) => type === 'TaskSubmitted');
  return waiting?.[0] ?? last;
}

export interface GraphNode {
  name: string;
  type: string;
  x: number;
  y: number;
}
export interface GraphEdge {
  from: string;
  to: string;
  kind: 'next' | 'choice' | 'default' | 'catch';
}

/**
 * The states as boxes in rows (breadth first from StartAt) and their transitions; a Map's iteration
 * states below the Map (an edge from the Map to the iteration's first state).
 */
export function layoutDefinition(definition: AslDefinition): { nodes: GraphNode[]; edges: GraphEdge[]; width: number; height: number } {
  const edges: GraphEdge[] = [];
  const states: AslDefinition['States'] = {};
  const collect = (within: AslDefinition) => {
    for (const [name, state] of Object.entries(within.States)) {
      states[name] = state;
      const processor = state.ItemProcessor ?? state.Iterator;
      if (processor) {
        edges.push({ from: name, to: processor.StartAt, kind: 'next' });
        collect(processor);
      }
    }
  };
  collect(definition);
  for (const [name, state] of Object.entries(states)) {
    if (typeof state['Next'] === 'string') edges.push({ from: name, to: state['Next'], kind: 'next' });
    for (const choice of (state['Choices'] as { Next?: string }[] | undefined) ?? []) if (choice.Next) edges.push({ from: name, to: choice.Next, kind: 'choice' });
    if (typeof state['Default'] === 'string') edges.push({ from: name, to: state['Default'], kind: 'default' });
    for (const caught of (state['Catch'] as { Next?: string }[] | undefined) ?? []) if (caught.Next) edges.push({ from: name, to: caught.Next, kind: 'catch' });
  }
  const depth = new Map<string, number>([[definition.StartAt, 0]]);
  const queue = [definition.StartAt];
  while (queue.length > 0) {
    const name = queue.shift()!;
    for (const edge of edges.filter((e) => e.from === name && !depth.has(e.to))) {
      depth.set(edge.to, depth.get(name)! + 1);
      queue.push(edge.to);
    }
  }
  let deepest = Math.max(0, ...depth.values());
  for (const name of Object.keys(states)) if (!depth.has(name)) depth.set(name, ++deepest);
  const rows = new Map<number, string[]>();
  for (const [name, row] of depth) rows.set(row, [...(rows.get(row) ?? []), name]);
  const BOX_W = 190;
  const GAP_X = 30;
  const ROW_H = 80;
  const widest = Math.max(...[...rows.values()].map((row) => row.length));
  const width = widest * (BOX_W + GAP_X) + GAP_X + 120;
  const nodes: GraphNode[] = [];
  for (const [row, names] of [...rows].sort((a, b) => a[0] - b[0])) {
    const rowWidth = names.length * (BOX_W + GAP_X) - GAP_X;
    names.forEach((name, i) => nodes.push({ name, type: states[name]!.Type, x: (width - 120 - rowWidth) / 2 + i * (BOX_W + GAP_X), y: 20 + row * ROW_H }));
  }
  return { nodes, edges, width, height: (rows.size + 0) * ROW_H + 40 };
}
