import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { type ApprovalRecord, type RunRecord, type ToolCallRecord, type TurnRecord } from '../../lambdas/records/ledger-records.js';
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
export declare function loadRecording(ledger: Ledger, runId: string): Promise<Recording | undefined>;
export declare const callOf: (recording: Recording, turn: number, call: number) => ToolCallRecord | undefined;
export declare const approvalOf: (recording: Recording, key: Pick<ApprovalRecord, 'turn' | 'call' | 'budget'>) => ApprovalRecord | undefined;
/** The recorded clock of a replay: `passed` is told of each reproducing write, `reached` waits for a moment's turn. */
export interface RecordedClock extends Clock {
    passed(key: string): void;
    /** Resolves once every moment recorded before `key`'s has been reproduced (at once for a key not recorded). */
    reached(key: string): Promise<void>;
}
/**
 * The recorded run's clock. `now()` is the time the recording says the earliest thing not yet
 * reproduced by the replay happened: the start of a model turn or tool call, the request or
 * decision of an approval (`passed` is told of each reproducing write). So every step of the
 * replay reads the time its recorded counterpart read: the budget notes the model is sent ("… 212
 * min left") and the wall-clock guard come out the same, with no real time involved.
 *
 * The moments are in the order of their recorded times, not of turns and calls: the calls of one
 * turn run side by side, and an approval asked for first may be decided last. What only a person
 * caused (a decision) is reproduced at its turn: the replay waits with it (`reached`) until every
 * earlier moment has been reproduced, so it reads its own time and the others theirs.
 */
export declare function recordedClock(recording: Recording): RecordedClock;
