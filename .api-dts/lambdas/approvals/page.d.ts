import type { Ledger } from '../ledger/ledger.js';
import type { ApprovalRecord } from '../records/ledger-records.js';
/**
 * The approval page: server-rendered HTML, no build step, no outside assets. It shows what the
 * agent wants to do and why — the tool, the arguments in words, the amount, the evidence (the
 * run's earlier read results that mention the same things), the run and the deadline — and
 * decides only by a POST from its buttons: opening the link (a mail scanner, a link preview) never
 * decides.
 */
export interface ApprovalView {
    approval: Omit<ApprovalRecord, 'kind'>;
    args?: Record<string, unknown>;
    evidence: {
        tool: string;
        turn: number;
        args: string;
        result: string;
    }[];
    approver: string;
    link: string;
    /** Where the page POSTs the decision (same origin). */
    postUrl: string;
}
/** The run's completed read calls up to the approval's turn that mention what the approval is about. */
export declare function evidenceFor(ledger: Ledger, approval: ApprovalRecord): Promise<ApprovalView['evidence']>;
export declare function escapeHtml(text: string): string;
export declare function formatAmount(amount: {
    minor: number;
    currency: string;
}): string;
/**
 * The page's heading and title: only what the harness itself knows — the tool, the amount the rule
 * put on it, the run — never text the model could have chosen (the red team's "$5.00 for office
 * coffee" above a $725.00 amount line).
 */
export declare function heading(approval: Pick<ApprovalRecord, 'toolName' | 'amount' | 'runId'>): string;
export declare function renderApprovalPage(view: ApprovalView): string;
export declare function renderErrorPage(status: number, message: string): string;
