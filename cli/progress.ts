import type { HistoryEvent } from '../local/engine/local-engine.js';
import { causeMessage, ErrorNames } from '../lambdas/shared/errors.js';
import { terminalSafe } from './format.js';

type Write = (line: string) => void;

/**
 * Live progress of an execution, one line per agent step and per retry, read from the execution's
 * history events as the engine emits them.
 */
export function progressPrinter(write: Write, startedAt = Date.now()) {
  // The state each event belongs to: a Task event links back (previousEventId) to its state's
  // entry or to the Task's event before it. Not simply the last state entered: a turn's tool
  // calls run side by side, their events interleaved. (An event without a link: the last entered.)
  const stateOf = new Map<number, string>();
  let last = '';
  let steps = 0;
  const elapsed = () => `${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)}s`;
  return (event: HistoryEvent) => {
    const entered = event.stateEnteredEventDetails?.name;
    if (entered !== undefined) last = entered;
    const state = entered ?? stateOf.get(event.previousEventId) ?? last;
    if (event.id !== undefined) stateOf.set(event.id, state);
    if (event.type === 'TaskFailed') {
      const details = event.taskFailedEventDetails;
      // Not a fault: CallTool routing a call to its approval wait, which prints its own ⏸ line.
      if (details?.error === ErrorNames.ApprovalNeeded) return;
      // The cause of a Lambda error is its JSON ({ errorType, errorMessage, trace }): its message, not the JSON.
      write(`${elapsed()}  ${'!'.padStart(4)}  ${state} failed: ${field(details?.error ?? '?')} — ${field(firstLine(causeMessage(details?.cause)))}`);
      return;
    }
    if (event.type !== 'TaskSucceeded' || !event.taskSucceededEventDetails) return;
    const payload = parsePayload(event.taskSucceededEventDetails.output);
    // CallModel decides before it calls: a decision that called no model (the run's end, a
    // compaction, a handoff) has no turn, and is no step.
    if (state === 'CallModel' && payload['turn'] !== undefined) {
      steps += 1;
      const calls = Number(payload['toolCalls'] ?? 0);
      write(`${elapsed()}  ${String(steps).padStart(4)}  turn ${String(payload['turn']).padStart(3)}  model: ${payload['stopReason']}${calls ? `, ${calls} tool call${calls > 1 ? 's' : ''}` : ''}`);
    } else if (state === 'CallTool') {
      steps += 1;
      write(`${elapsed()}  ${String(steps).padStart(4)}  turn ${String(payload['turn']).padStart(3)}  tool:  ${field(payload['name'])} → ${field(payload['outcome'])}`);
    } else if (state === 'Finalize' || state === 'RecordFailure') {
      write(`${elapsed()}  done  ${field(payload['status'])}: ${field(payload['reason'])}`);
    }
  };
}

/** A value from the execution (a tool name the model chose, an error's cause): one line, nothing a terminal obeys. */
function field(value: unknown): string {
  return terminalSafe(String(value), { oneLine: true });
}

function parsePayload(output: string): Record<string, unknown> {
  try {
    const parsed = JSON.parse(output) as { Payload?: Record<string, unknown> };
    return parsed.Payload ?? {};
  } catch {
    return {};
  }
}

function firstLine(text: string | undefined): string {
  return (text ?? '').split('\n')[0]!.slice(0, 160);
}
