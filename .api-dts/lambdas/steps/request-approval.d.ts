import * as z from 'zod';
import type { AgentDefinition } from '../define.js';
import { type ApprovalStatus } from '../records/ledger-records.js';
import { type ApprovalDeps } from '../approvals/decision.js';
/**
 * The RequestApproval step: records a pending approval with the execution's task token (or finds
 * the one recorded already) and tells the approvers; how it is decided: approvals/decision.ts.
 */
export declare const RequestApprovalInput: z.ZodUnion<readonly [z.ZodObject<{
    runId: z.ZodString;
    turn: z.ZodNumber;
    call: z.ZodNumber;
    taskToken: z.ZodString;
}, z.core.$strip>, z.ZodObject<{
    runId: z.ZodString;
    extension: z.ZodObject<{
        guard: z.ZodEnum<{
            dollars: "dollars";
            loop: "loop";
            steps: "steps";
            tokens: "tokens";
            wallClock: "wallClock";
        }>;
        extension: z.ZodNumber;
        limit: z.ZodNumber;
    }, z.core.$strip>;
    taskToken: z.ZodString;
}, z.core.$strip>]>;
export declare function createRequestApproval(deps: ApprovalDeps & {
    agent: AgentDefinition;
}): (input: unknown) => Promise<{
    approvalId: string;
    status: ApprovalStatus;
}>;
