import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * A state directory that serves several agents (`savepoint serve --agent a --agent b`) keeps the
 * engine and ledger of each after the first in `agents/<name>/` beneath it, as each `DurableAgent`
 * has a table of its own on AWS. What a stack's agents share on AWS — its keys (the decision,
 * starter and link keys of the shared control plane) — they share here too: the root's `keys/`.
 */
export const agentDir = (stateDir: string, agent: string) => join(stateDir, 'agents', agent);

/** The state directory whose keys an engine on `stateDir` uses: the root one when `stateDir` is an agent's directory beneath it. */
export function keysHomeOf(stateDir: string): string {
  const root = dirname(dirname(stateDir));
  return basename(dirname(stateDir)) === 'agents' && agentDir(root, basename(stateDir)) === stateDir && existsSync(join(root, 'keys')) ? root : stateDir;
}
