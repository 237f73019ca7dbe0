import type { BreakerState } from '../lambdas/records/breaker-state.js';
import type { RunReport } from '../lambdas/runs/report.js';
import type { ApprovalRecord } from '../lambdas/records/ledger-records.js';
import type { StateSummary } from '../local/engine/local-engine.js';
/**
 * Text safe to print on a terminal. What a model or a tool chose (a summary, a tool name, an id, a
 * reason, an error's cause) reaches the CLI's output, and a terminal obeys control sequences in
 * it: `ESC[2K` erases the line, `ESC[8m` hides what follows, `\r` rewinds, a bidi override
 * reorders — a $9,900.00 approval prompt can be made to read "$5.00 for office coffee". So every
 * C0 and C1 control, DEL, and the invisible bidi and zero-width format characters become visible
 * escapes (`\u001b`); only a newline and a tab are kept, and with `oneLine` the newline too. In
 * JSON output the escape is JSON's own, so the data reads back the same.
 */
export declare function terminalSafe(text: string, options?: {
    oneLine?: boolean;
}): string;
/** What the execution did, from its history: Lambda invocations including retries, per state. */
export interface ExecutionFigures {
    executionArn: string;
    status: string;
    lambdaInvocations: number;
    /** Invocations that re-ran a state after a failure (Retry), per the history. */
    retries: number;
    states: Record<string, {
        entered: number;
        invocations: number;
        failures: number;
        errors: Record<string, number>;
    }>;
}
export declare function executionFigures(executionArn: string, status: string, summary: Record<string, StateSummary>): ExecutionFigures;
export declare function formatReport(report: RunReport, execution?: ExecutionFigures): string;
export declare function formatApproval(approval: Omit<ApprovalRecord, 'kind'> & {
    links?: {
        approver: string;
        url: string;
    }[];
}): string;
export declare function formatBreaker(breaker: BreakerState): string;
