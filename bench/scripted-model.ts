import type { ModelClient } from '../lambdas/records/messages.js';
import { recordedResponse } from '../lambdas/conversation/turns.js';
import type { TurnRecord } from '../lambdas/records/ledger-records.js';

/**
 * The benchmark's model that does no work: a `ModelClient` (the interface every provider adapter
 * implements) that, once `replay` has been given a finished run's turns, answers turn n of any run
 * with that run's recorded turn n — its content, stop reason and usage — instead of calling the
 * model it wraps. Until then it passes every call through, so the warm-up run that is recorded is
 * the real simulated model's. The harness around the call (the conversation rebuilt from the
 * ledger, the guards, the breaker, the claim and record) runs as it always does; only the model's
 * own CPU (the simulator's request parsing, prompt-cache accounting and scripted policy) is left
 * out of what `--overhead` measures.
 */
export function scriptedModel() {
  let script: readonly TurnRecord[] | undefined;
  let calls = 0;
  return {
    wrap(inner: ModelClient): ModelClient {
      return {
        async createMessage(request, signal) {
          if (script === undefined) return inner.createMessage(request, signal);
          calls += 1;
          // The turn being asked for: one more than the assistant turns the conversation holds.
          const turn = request.messages.filter((message) => message.role === 'assistant').length + 1;
          const recorded = script[turn - 1];
          if (recorded === undefined || recorded.turn !== turn) throw new Error(`scripted model: no recorded turn ${turn} (the script has ${script.length})`);
          return recordedResponse(recorded);
        },
      };
    },
    /** From now on, answers from these turns (in order, turn 1 first). */
    replay(turns: readonly TurnRecord[]): void {
      // A turn is found by counting the request's assistant turns: a compacted conversation has fewer.
      if (turns.some((turn) => turn.compaction !== undefined)) throw new Error('scripted model: the recorded run compacted its context; turns cannot be found by position');
      script = turns;
    },
    /** Calls answered from the script. */
    replayed: () => calls,
  };
}
