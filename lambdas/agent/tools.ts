import { z } from 'zod';
import { Cents, IsoDate, ReportSummary, type CommerceApi } from './domain.js';

/**
 * The refund reconciler's tools. Each has a zod schema for its arguments (the model's output is
 * outside input: it is validated before anything runs), a description for the model, and whether
 * it changes the world. Side-effecting tools receive an idempotency key derived from
 * (run id, turn, tool call id) — never from the attempt — so a re-sent call is answered with the
 * provider's first result.
 */
interface ToolDefinition<S extends z.ZodType> {
  readonly name: string;
  readonly description: string;
  readonly input: S;
  readonly sideEffect: boolean;
  execute(api: CommerceApi, args: z.output<S>, idempotencyKey: string, signal?: AbortSignal): Promise<unknown>;
}

function tool<S extends z.ZodType>(definition: ToolDefinition<S>): ToolDefinition<S> {
  return definition;
}

const Id = z.string().min(1).max(64);

export const tools = {
  list_refund_requests: tool({
    name: 'list_refund_requests',
    description: 'Lists the refund requests customers filed on a given day.',
    input: z.object({ date: IsoDate }).strict(),
    sideEffect: false,
    execute: async (api, args, _key, signal) => ({ refundRequests: await api.listRefundRequests(args.date, signal) }),
  }),
  get_order: tool({
    name: 'get_order',
    description: 'Fetches an order: its total, status and items.',
    input: z.object({ orderId: Id }).strict(),
    sideEffect: false,
    execute: (api, args, _key, signal) => api.getOrder(args.orderId, signal),
  }),
  get_payment: tool({
    name: 'get_payment',
    description: 'Fetches a payment: the captured amount, what was refunded already and the refunds.',
    input: z.object({ paymentId: Id }).strict(),
    sideEffect: false,
    execute: (api, args, _key, signal) => api.getPayment(args.paymentId, signal),
  }),
  issue_refund: tool({
    name: 'issue_refund',
    description: 'Refunds an amount of a payment for a refund request. Pays money: call once per request.',
    input: z
      .object({
        paymentId: Id,
        refundRequestId: Id,
        amountCents: Cents.positive(),
        reason: z.string().min(1).max(500),
      })
      .strict(),
    sideEffect: true,
    execute: (api, args, key, signal) => api.createRefund(args, key, signal),
  }),
  flag_for_review: tool({
    name: 'flag_for_review',
    description: 'Puts a refund request in the human review queue with the reason it cannot be refunded automatically.',
    input: z.object({ refundRequestId: Id, reason: z.string().min(1).max(500) }).strict(),
    sideEffect: true,
    execute: (api, args, key, signal) => api.createReview(args, key, signal),
  }),
  post_report: tool({
    name: 'post_report',
    description: "Posts the day's reconciliation report. Call once, at the end.",
    input: z.object({ date: IsoDate, summary: ReportSummary, text: z.string().max(4000) }).strict(),
    sideEffect: true,
    execute: (api, args, key, signal) => api.postReport(args, key, signal),
  }),
} as const;

export type ToolName = keyof typeof tools;
export const TOOL_NAMES = Object.keys(tools) as ToolName[];

export function isToolName(name: string): name is ToolName {
  return Object.hasOwn(tools, name);
}

/** The tool list in the shape of a messages API request (`tools: [{ name, description, input_schema }]`). */
export function toolSpecs(): { name: string; description: string; input_schema: Record<string, unknown> }[] {
  return TOOL_NAMES.map((name) => {
    const definition = tools[name];
    const { $schema: _ignored, ...input_schema } = z.toJSONSchema(definition.input) as Record<string, unknown>;
    return { name, description: definition.description, input_schema };
  });
}
