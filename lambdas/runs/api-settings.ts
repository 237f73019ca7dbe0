import * as z from 'zod';
import { PriceOverrides } from '../models/prices.js';
import { BudgetCaps } from '../records/ledger-records.js';

const Directory = z.record(z.string().min(1), z.array(z.string().min(1)));

/**
 * What the deployment set for one agent that the stack's API functions act on (infra/stack-api.ts
 * writes it, only the fields an agent sets: an agent with every default is `{}`): its model and
 * prices over the stack's (a run request is refused for want of a price as StartRun would refuse
 * it), the ceilings on a run request's budgets, and its people and approval policy, which decide
 * its approvals and who may start its runs — the deployment's, never the run's or the model's.
 */
export const AgentApiSettings = z
  .object({
    model: z.string().min(1).optional(),
    prices: PriceOverrides().optional(),
    maxBudgets: BudgetCaps().optional(),
    /** @default true */
    separationOfDuties: z.boolean().optional(),
    secondApproverAboveMinor: z.number().int().nonnegative().optional(),
    unknownStarter: z.enum(['two-approvers', 'any-approver']).optional(),
    /** @default {}: nobody decides by IAM, only by link */
    approverPrincipals: Directory.optional(),
    starterPrincipals: Directory.optional(),
    /** Who its signed links are sent to (`approvals.approvers`), comma-separated (it may be a stack parameter). @default none */
    approvers: z.string().min(1).optional(),
    /** The decision key it signs with, when not the stack's `DECISION_KEY_ID` (its `decisionKeyVersion`), and the keys that one replaced. */
    decisionKeyId: z.string().min(1).optional(),
    previousDecisionKeyIds: z.array(z.string().min(1)).optional(),
    /** Its batch item function (DurableAgent's `batches`), which its batches' Tasks invoke. @default none: `POST /v1/batches` naming it answers 404 */
    batchItemFunction: z.string().startsWith('arn:').optional(),
  })
  .strict();
export type AgentApiSettings = z.infer<typeof AgentApiSettings>;

