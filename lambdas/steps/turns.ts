import type { ToolUseBlock } from '../agent/messages.js';
import { findTool, type AgentDefinition, type ApprovalRequest, type RunView } from '../define.js';
import type { Ledger } from '../ledger/ledger.js';
import type { RunRecord, TurnRecord } from '../ledger/records.js';
import { InvalidInputError } from '../shared/errors.js';

/** What the state machine carries about the next tool call: a pointer into the ledger, not the call. */
export interface NextToolCall {
  turn: number;
  call: number;
  name: string;
  needsApproval: boolean;
}

export function toolUses(turn: TurnRecord): ToolUseBlock[] {
  return turn.content.filter((block): block is ToolUseBlock => block.type === 'tool_use');
}

/**
 * What a person must see before this call runs, by the tool's own approval rule; nothing when it
 * runs on its own. Arguments its schema refuses need no approval: CallTool fails them first.
 */
export function approvalRequest(agent: AgentDefinition, block: ToolUseBlock, run: RunRecord): ApprovalRequest | undefined {
  const tool = findTool(agent, block.name);
  if (!tool?.needsApproval) return undefined;
  const args = tool.input.safeParse(block.input);
  return args.success ? tool.needsApproval(args.data, runView(run)) : undefined;
}

export function runView(run: RunRecord): RunView {
  return { runId: run.runId, input: run.input, config: run.config };
}

/** The tool call after `afterCall` (1-based) in `turn`, or null when the turn has no more. */
export function nextToolCall(agent: AgentDefinition, turn: TurnRecord, afterCall: number, run: RunRecord): NextToolCall | null {
  const block = toolUses(turn)[afterCall];
  if (!block) return null;
  return { turn: turn.turn, call: afterCall + 1, name: block.name, needsApproval: approvalRequest(agent, block, run) !== undefined };
}

export async function loadRun(ledger: Ledger, runId: string): Promise<RunRecord> {
  const run = await ledger.getRun(runId);
  if (!run) throw new InvalidInputError(`runId: no run ${runId} in the ledger`);
  return run;
}

export async function loadToolUse(
  ledger: Ledger,
  runId: string,
  turnNumber: number,
  call: number,
): Promise<{ turn: TurnRecord; block: ToolUseBlock }> {
  const turn = await ledger.getTurn(runId, turnNumber);
  const block = turn ? toolUses(turn)[call - 1] : undefined;
  if (!turn || !block) throw new InvalidInputError(`call: run ${runId} has no tool call ${call} in turn ${turnNumber}`);
  return { turn, block };
}

/** The idempotency key of a tool call: the same for every attempt, every resume, every engine. */
export function idempotencyKey(runId: string, turn: number, toolCallId: string): string {
  return `${runId}:${turn}:${toolCallId}`;
}

/** The number of leading tool calls of a recorded turn that already have their result. */
export async function completedCalls(ledger: Ledger, turn: TurnRecord): Promise<number> {
  let call = 0;
  while (call < toolUses(turn).length && (await ledger.getCall(turn.runId, turn.turn, call + 1))?.status === 'completed') call += 1;
  return call;
}
