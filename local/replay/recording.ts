import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { resolveResults } from '../../lambdas/ledger/blobs.js';
import { approvalSkOf, type ApprovalRecord, type RunRecord, type ToolCallRecord, type TurnRecord } from '../../lambdas/records/ledger-records.js';
import type { Clock } from '../../lambdas/shared/ports.js';

/**
 * A finished run as its ledger recorded it: the observation log replay answers every call from.
 * Tool results stored by reference (ledger/blobs.ts) are read back whole.
 */
export interface Recording {
  run: RunRecord;
  turns: TurnRecord[];
  calls: ToolCallRecord[];
  approvals: ApprovalRecord[];
}

export async function loadRecording(ledger: Ledger, runId: string): Promise<Recording | undefined> {
  const run = await ledger.getRun(runId);
  if (!run) return undefined;
  const { turns, calls, approvals } = await ledger.listConversation(runId);
  return { run, turns, calls: await resolveResults(ledger, calls), approvals };
}

export const callOf = (recording: Recording, turn: number, call: number) => recording.calls.find((record) => record.turn === turn && record.call === call);
export const approvalOf = (recording: Recording, key: Pick<ApprovalRecord, 'turn' | 'call' | 'budget'>) =>
  recording.approvals.find((record) => approvalSkOf(record) === approvalSkOf(key));

/** A moment of the recorded run, and the write of the replay that reproduces it. */
type Moment = { key: string; at: number };

/**
 * The recorded run's clock. `now()` is the time the recording says the next thing happened: the
 * start of the next model turn or tool call, the request or decision of the next approval, not yet
 * reproduced by the replay (`passed` is told of each reproducing write). So every step of the
 * replay reads the time its recorded counterpart read: the budget notes the model is sent ("… 212
 * min left") and the wall-clock guard come out the same, with no real time involved.
 */
export function recordedClock(recording: Recording): Clock & { passed(key: string): void } {
  const moments: Moment[] = [{ key: 'run', at: Date.parse(recording.run.createdAt) }];
  const start = (record: { recordedAt?: string; latencyMs?: number }) => Date.parse(record.recordedAt ?? recording.run.createdAt) - (record.latencyMs ?? 0);
  for (const turn of recording.turns) {
    moments.push({ key: `turn:${turn.turn}`, at: start(turn) });
    for (const call of recording.calls.filter((record) => record.turn === turn.turn)) {
      const approval = approvalOf(recording, call);
      if (approval) {
        moments.push({ key: `asked:${approvalSkOf(approval)}`, at: Date.parse(approval.createdAt) });
        if (approval.decidedAt) moments.push({ key: `decided:${approvalSkOf(approval)}`, at: Date.parse(approval.decidedAt) });
      }
      moments.push({ key: `call:${call.turn}:${call.call}`, at: start(call) });
    }
  }
  const done = new Set<string>();
  const end = Date.parse(recording.run.finishedAt ?? recording.run.updatedAt);
  let next = 0;
  return {
    now: () => new Date(moments[next]?.at ?? end),
    passed(key) {
      done.add(key);
      while (next < moments.length && done.has(moments[next]!.key)) next += 1;
    },
  };
}
