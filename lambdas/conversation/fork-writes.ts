import { stableJson, type ToolDefinition } from '../define.js';
import type { TurnLedger } from '../ledger/ledger.js';
import type { RunRecord, ToolCallRecord } from '../records/ledger-records.js';
import { RecentMap } from '../shared/recent-map.js';

/**
 * A fork's writes against its parent's (runs/fork.ts): which the fork answers from the parent's
 * record instead of sending. The fork's CallTool (`forkEffects`) and its approval planning
 * (tool-calls.ts) ask the same pure verdict, so a write that is reused is never sent and never
 * put to a person either.
 */

/** What a fork's write is, against the parent's writes. */
export type WriteVerdict =
  | { kind: 'reuse'; parent: ToolCallRecord }
  | { kind: 'hazard'; parent: ToolCallRecord; reason: string }
  | { kind: 'new' };

/**
 * A write of a fork against the parent's completed writes: made before with the same business key
 * (else the same tool and arguments) → reuse its record; the same key with other arguments → a
 * hazard; otherwise new. Pure: the hazard report, the fork's CallTool and its approval planning ask it.
 */
export function writeVerdict(tool: Pick<ToolDefinition, 'name'>, args: unknown, key: string | undefined, parentWrites: readonly (ToolCallRecord & { businessKey?: string })[]): WriteVerdict {
  const same = parentWrites.filter((call) => call.name === tool.name && call.outcome === 'ok');
  const argsText = stableJson(args);
  const byArgs = same.find((call) => stableJson(call.args) === argsText);
  if (key !== undefined) {
    const byKey = same.find((call) => call.businessKey === key);
    if (byKey && stableJson(byKey.args) === argsText) return { kind: 'reuse', parent: byKey };
    if (byKey) return { kind: 'hazard', parent: byKey, reason: `the parent made ${tool.name} with the same business key ${key} and other arguments (${stableJson(byKey.args)})` };
  }
  return byArgs ? { kind: 'reuse', parent: byArgs } : { kind: 'new' };
}

/** The parent runs whose completed writes a container keeps (more than it runs forks at once: one evicted is read again). */
const RECENT_PARENTS = 64;
const parentsOf = new WeakMap<object, RecentMap<string, Promise<ToolCallRecord[]>>>();

/**
 * The parent's completed writes a `reuse` fork may answer from (none for any other run), read
 * once per parent per container: a parent's completed calls never change.
 */
export async function reusableWrites(ledger: Pick<TurnLedger, 'listConversation'>, run: Pick<RunRecord, 'forkedFrom'>): Promise<ToolCallRecord[] | undefined> {
  const lineage = run.forkedFrom;
  if (lineage?.effects !== 'reuse') return undefined;
  let recent = parentsOf.get(ledger);
  if (!recent) parentsOf.set(ledger, (recent = new RecentMap(RECENT_PARENTS)));
  return recent.getOrSet(lineage.runId, () =>
    ledger.listConversation(lineage.runId).then(({ calls }) => calls.filter((call) => call.status === 'completed' && call.effect === 'write')),
  );
}
