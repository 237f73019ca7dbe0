import type { HistoryEvent } from '../local/engine.js';

type Write = (line: string) => void;

/**
 * Live progress of an execution, one line per agent step and per retry, read from the execution's
 * history events as the engine emits them.
 */
export function progressPrinter(write: Write, startedAt = Date.now()) {
  let state = '';
  let steps = 0;
  const elapsed = () => `${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)}s`;
  return (event: HistoryEvent) => {
    if (event.stateEnteredEventDetails) state = event.stateEnteredEventDetails.name;
    if (event.type === 'TaskFailed') {
      const details = event.taskFailedEventDetails;
      write(`${elapsed()}  ${'!'.padStart(4)}  ${state} failed: ${details?.error ?? '?'} — ${firstLine(details?.cause)}`);
      return;
    }
    if (event.type !== 'TaskSucceeded' || !event.taskSucceededEventDetails) return;
    const payload = parsePayload(event.taskSucceededEventDetails.output);
    if (state === 'CallModel') {
      steps += 1;
      const calls = Number(payload['toolCalls'] ?? 0);
      write(`${elapsed()}  ${String(steps).padStart(4)}  turn ${String(payload['turn']).padStart(3)}  model: ${payload['stopReason']}${calls ? `, ${calls} tool call${calls > 1 ? 's' : ''}` : ''}`);
    } else if (state === 'CallTool') {
      steps += 1;
      write(`${elapsed()}  ${String(steps).padStart(4)}  turn ${String(payload['turn']).padStart(3)}  tool:  ${payload['name']} → ${payload['outcome']}`);
    } else if (state === 'Finalize' || state === 'RecordFailure') {
      write(`${elapsed()}  done  ${payload['status']}: ${payload['reason']}`);
    }
  };
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
