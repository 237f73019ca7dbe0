import type { LedgerFacts } from '../../lambdas/define.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
/**
 * What the ledger remembers that a simulated world can check its own records against, in generic
 * terms (the harness names no tool's domain): the completed side-effecting tool calls, by tool.
 * A world whose records forget what the ledger says was done (a deleted journal) must say so,
 * or the next run would do it again; so must one whose records hold work of runs the ledger does
 * not know (a deleted ledger beside a kept journal).
 */
export declare function ledgerFacts(ledger: Ledger): Promise<LedgerFacts>;
