import type { AgentDefinition, ApprovalRequest, RunFacts, ToolDefinition } from '../define.js';
import type { AggregateLedger } from '../ledger/ledger.js';
import { aggregateKey } from '../ledger/protocol.js';
import { DYNAMODB_PARTITION_KEY_MAX_BYTES } from '../shared/limits.js';
import { formatAmount } from '../shared/money.js';

/**
 * The harness's own approval limits, from what the agent declares (a tool's `aggregate`, the
 * agent's `approvals.maxUnapprovedPerRun`) and the run's facts — never from what the model writes
 * beyond the arguments the declared functions read. Pure, like `decide`: asked whenever the call is
 * derived (planning, asking a person, calling), it answers the same, since the facts do not change
 * while the turn runs. Across runs, the total is reserved in the ledger before the call is sent
 * (`reserveAmount`, ledger/aggregates.ts reserveAggregate).
 */

/**
 * The longest key a tool's `aggregate.key` may give, in UTF-8 bytes. The ledger adds a key's amounts
 * up on one item, keyed `AGG#<agent>:<tool>:<key>` (`aggregateKeyOf`, ledger/protocol.ts
 * `aggregateKey`): a DynamoDB partition key, which DynamoDB refuses over 2048 bytes
 * (DYNAMODB_PARTITION_KEY_MAX_BYTES; ValidationException on the read, and the step would fail on
 * every retry). What is left of it beside the longest agent name (40 characters, define/agent.ts)
 * and tool name (64, define/tool.ts). The key comes from the model's arguments: a longer one is one
 * the declared functions cannot read, and a person is asked (`aggregateApproval`).
 */
export const AGGREGATE_KEY_MAX_BYTES = DYNAMODB_PARTITION_KEY_MAX_BYTES - Buffer.byteLength(aggregateKey(`${'a'.repeat(40)}:${'t'.repeat(64)}:`).pk);

/** What one call of an aggregated tool moves, and the key it adds up by; undefined when the tool declares none or its functions cannot read these arguments (a key empty or over AGGREGATE_KEY_MAX_BYTES). */
export function aggregateOf(tool: Pick<ToolDefinition, 'aggregate'>, args: unknown): { key: string; amount: number } | undefined {
  if (!tool.aggregate) return undefined;
  try {
    const key: unknown = tool.aggregate.key(args);
    const amount: unknown = tool.aggregate.amount(args);
    if (typeof key !== 'string' || key.length === 0 || Buffer.byteLength(key, 'utf8') > AGGREGATE_KEY_MAX_BYTES) return undefined;
    if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0) return undefined;
    return { key, amount };
  } catch {
    return undefined;
  }
}

/**
 * Whether the call needs a person by the agent's declared limits: the total of its key in this
 * run (this call included) above the tool's threshold, or the run's total moved above the agent's
 * `maxUnapprovedPerRun`. Earlier calls count unless they were refused (rejected, expired, an error):
 * parts asked for alongside this call count as made.
 */
export function aggregateApproval(agent: Pick<AgentDefinition, 'tools' | 'approvals'>, tool: ToolDefinition, args: unknown, facts: RunFacts): ApprovalRequest | undefined {
  if (!tool.aggregate) return undefined;
  const own = aggregateOf(tool, args);
  // Arguments the declared functions cannot read are not waved through: a person sees them.
  if (!own) return { summary: `${tool.name}: the amount or key of this call cannot be read from its arguments (a key is a non-empty string of at most ${AGGREGATE_KEY_MAX_BYTES} UTF-8 bytes, an amount a whole number ≥ 0)` };
  const moved = facts.calls.flatMap((call) => {
    if ((call.outcome ?? 'ok') !== 'ok') return [];
    const other = agent.tools.find((candidate) => candidate.name === call.name);
    const of = other && aggregateOf(other, call.args);
    return of ? [{ tool: call.name, ...of }] : [];
  });
  const keyTotal = moved.filter((m) => m.tool === tool.name && m.key === own.key).reduce((sum, m) => sum + m.amount, own.amount);
  const runTotal = moved.reduce((sum, m) => sum + m.amount, own.amount);
  const cap = agent.approvals?.maxUnapprovedPerRun;
  const currency = tool.aggregate.currency;
  const { amount, money } = amountsIn(currency);
  const what = describe(tool, args);
  if (keyTotal > tool.aggregate.threshold) {
    return {
      summary: `${what}: ${money(keyTotal)} for ${own.key} in this run, above the threshold ${money(tool.aggregate.threshold)}`,
      ...(currency && { amount: amount(keyTotal) }),
      details: { aggregateKey: own.key, thisCall: own.amount, totalForKey: keyTotal, threshold: tool.aggregate.threshold },
    };
  }
  if (cap !== undefined && runTotal > cap) {
    return {
      summary: `${what}: ${money(runTotal)} moved in this run, above the agent's maxUnapprovedPerRun ${money(cap)}`,
      ...(currency && { amount: amount(own.amount) }),
      details: { aggregateKey: own.key, thisCall: own.amount, movedInRun: runTotal, maxUnapprovedPerRun: cap },
    };
  }
  return undefined;
}

/** How a tool's amounts read: the approval's `amount` (minor units and currency), and the summary's text. */
function amountsIn(currency: string | undefined) {
  return {
    amount: (minor: number) => ({ minor, currency: currency ?? '' }),
    money: (minor: number) => (currency ? formatAmount({ minor, currency }) : String(minor)),
  };
}

/** Who adds a call's amount to its key's total: the effect's business key (one effect adds once across runs), else the call. */
function holderOf(call: { runId: string; turn: number; call: number; effectKey?: string }): string {
  return call.effectKey ?? `${call.runId}:${call.turn}:${call.call}`;
}

/**
 * What a person is asked when a call would pass its tool's threshold across the agent's runs — what
 * `reserveAmount` refuses without an approval — or undefined when it fits (or has added already).
 * The totals only grow, so a call refused once is still over when the request is made.
 */
export async function crossRunApproval(
  ledger: Pick<AggregateLedger, 'getAggregate'>,
  agent: Pick<AgentDefinition, 'name'>,
  { tool, args }: { tool: ToolDefinition; args: unknown },
  call: { runId: string; turn: number; call: number; effectKey?: string },
): Promise<ApprovalRequest | undefined> {
  const own = tool.aggregate && aggregateOf(tool, args);
  if (!tool.aggregate || !own) return undefined;
  const record = await ledger.getAggregate(aggregateKeyOf(agent, tool, own.key));
  const total = (record?.total ?? 0) + own.amount;
  if (record?.holders.includes(holderOf(call)) || total <= tool.aggregate.threshold) return undefined;
  const { amount, money } = amountsIn(tool.aggregate.currency);
  return {
    summary: `${describe(tool, args)}: ${money(total)} for ${own.key} across this agent's runs, above the threshold ${money(tool.aggregate.threshold)}`,
    ...(tool.aggregate.currency && { amount: amount(total) }),
    details: { aggregateKey: own.key, thisCall: own.amount, totalAcrossRuns: total, threshold: tool.aggregate.threshold },
  };
}

/** The ledger key of a tool's amounts for one key: `<agent>:<tool>:<key>`. */
export const aggregateKeyOf = (agent: Pick<AgentDefinition, 'name'>, tool: Pick<ToolDefinition, 'name'>, key: string) => `${agent.name}:${tool.name}:${key}`;

/**
 * Reserves what the call moves across the agent's runs, before it is sent: within the tool's
 * threshold, or whatever the total for a call a person approved. False when refused: the call is
 * not sent, and CallTool asks a person (`crossRunApproval`).
 */
export async function reserveAmount(
  ledger: AggregateLedger,
  agent: Pick<AgentDefinition, 'name'>,
  { tool, args }: { tool: ToolDefinition; args: unknown },
  call: { runId: string; turn: number; call: number; approved: boolean; effectKey?: string },
  now: Date,
): Promise<boolean> {
  const own = tool.aggregate && aggregateOf(tool, args);
  if (!tool.aggregate || !own) return true;
  const key = aggregateKeyOf(agent, tool, own.key);
  const reservation = await ledger.reserveAggregate(
    // One effect adds once: a call named by a business key (a re-run of the same day, another
    // run asking for the same refund) is one holder across runs, and gets the first's result.
    { key, holder: holderOf(call), amount: own.amount, ...(!call.approved && { threshold: tool.aggregate.threshold }) },
    now,
  );
  return reservation.reserved;
}

/** The call in the tool's own words (`describe`), or its name. */
function describe(tool: ToolDefinition, args: unknown): string {
  try {
    return tool.describe?.(args) ?? tool.name;
  } catch {
    return tool.name;
  }
}
