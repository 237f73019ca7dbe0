import type { AgentDefinition, ApprovalRequest, RunFacts, ToolDefinition } from '../define.js';
import type { AggregateLedger } from '../ledger/ledger.js';
import type { Outcome } from './failures.js';
/**
 * The harness's own approval limits, from what the agent declares (a tool's `aggregate`, the
 * agent's `approvals.maxUnapprovedPerRun`) and the run's facts — never from what the model writes
 * beyond the arguments the declared functions read. Pure, like `decide`: asked whenever the call is
 * derived (planning, asking a person, calling), it answers the same, since the facts do not change
 * while the turn runs. Across runs, the total is reserved in the ledger before the call is sent
 * (`reserveAmount`, ledger/aggregates.ts reserveAggregate).
 */
/** What one call of an aggregated tool moves, and the key it adds up by; undefined when the tool declares none or its functions cannot read these arguments. */
export declare function aggregateOf(tool: Pick<ToolDefinition, 'aggregate'>, args: unknown): {
    key: string;
    amount: number;
} | undefined;
/**
 * Whether the call needs a person by the agent's declared limits: the total of its key in this
 * run (this call included) above the tool's threshold, or the run's total moved above the agent's
 * `maxUnapprovedPerRun`. Earlier calls count unless they were refused (rejected, expired, an error):
 * parts asked for alongside this call count as made.
 */
export declare function aggregateApproval(agent: Pick<AgentDefinition, 'tools' | 'approvals'>, tool: ToolDefinition, args: unknown, facts: RunFacts): ApprovalRequest | undefined;
/** The ledger key of a tool's amounts for one key: `<agent>:<tool>:<key>`. */
export declare const aggregateKeyOf: (agent: Pick<AgentDefinition, 'name'>, tool: Pick<ToolDefinition, 'name'>, key: string) => string;
/**
 * Reserves what the call moves across the agent's runs, before it is sent: within the tool's
 * threshold, or whatever the total for a call a person approved. Refused, the call is not sent and
 * the model is told a person must approve it (the outcome is recorded like any: replay says the same).
 */
export declare function reserveAmount(ledger: AggregateLedger, agent: Pick<AgentDefinition, 'name'>, { tool, args }: {
    tool: ToolDefinition;
    args: unknown;
}, call: {
    runId: string;
    turn: number;
    call: number;
    approved: boolean;
    effectKey?: string;
}, now: Date): Promise<Outcome | undefined>;
