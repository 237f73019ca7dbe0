import { agentFingerprint, type AgentDefinition } from '../define.js';
import type { RunRecord } from '../records/ledger-records.js';
import { DEFAULT_PRICE_TABLE, type PriceTable } from '../models/prices.js';
import { VersionMismatchError } from '../shared/errors.js';

/**
 * Versions of an agent, and the rule that keeps a live run on its own.
 *
 * A run is bound to the fingerprint of the code that started it (define/fingerprint.ts: version, prompt,
 * model, tool schemas, price table, code version). On AWS each deploy publishes a state machine
 * version whose Tasks invoke pinned Lambda versions, so an execution keeps calling the code it
 * started on; the local engine holds its versions the same way (local/aws/state-machine-versions.ts). This file is
 * the check behind that pinning, run by every step: a step whose code is not the run's fails with
 * `Agent.VersionMismatch` instead of continuing a conversation another agent started. The only way
 * to move a live run to other code is a recorded migration (`savepoint migrate`), allowed when the
 * new version declares the run's version compatible (`compatibleWith`).
 */

/** The fingerprint of this code for a run's model (a run's fingerprint includes its model), computed once per model. */
export type CodeFingerprint = (model: string) => string;

export function codeFingerprint(agent: AgentDefinition, codeVersion: string, priceTable: PriceTable = DEFAULT_PRICE_TABLE): CodeFingerprint {
  // Hashing the tool schemas costs more than a step's own work: once per model per container.
  const byModel = new Map<string, string>();
  return (model) => {
    let fingerprint = byModel.get(model);
    if (fingerprint === undefined) byModel.set(model, (fingerprint = agentFingerprint({ ...agent, model }, codeVersion, priceTable.version)));
    return fingerprint;
  };
}

/** `version 2 (3f9c…)`, or the fingerprint alone for an agent that declares no version. */
export function describeVersion(version: string | undefined, fingerprint: string): string {
  return version === undefined ? fingerprint : `version ${version} (${fingerprint})`;
}

/**
 * Throws `Agent.VersionMismatch` when this code is not the code the run is bound to. A recorded
 * migration (or a forced resume) rebinds the run, so a mismatch here is always unexplained: a
 * deploy that swapped the code under a live execution, or an execution a migration superseded.
 */
export function checkVersion(run: RunRecord, agent: Pick<AgentDefinition, 'version'>, fingerprintOf: CodeFingerprint): string {
  const fingerprint = fingerprintOf(run.model);
  if (run.fingerprint !== fingerprint) {
    throw new VersionMismatchError(
      `run ${run.runId} started on ${describeVersion(run.agentVersion, run.fingerprint)}, this code is ${describeVersion(agent.version, fingerprint)}; ` +
        `finish it on its version or migrate it (savepoint migrate ${run.runId} --to <version>)`,
    );
  }
  return fingerprint;
}

export type MigrationVerdict = { allowed: true } | { allowed: false; reason: string };

/**
 * Whether a live run may move to `agent`'s code: only when this version names the run's version
 * in `compatibleWith`. A pure function of the run and the definition (the CLI and StartRun ask it).
 */
export function migrationVerdict(run: Pick<RunRecord, 'runId' | 'status' | 'agent' | 'agentVersion' | 'fingerprint'>, agent: Pick<AgentDefinition, 'name' | 'version' | 'compatibleWith'>, toFingerprint: string, toVersion: string): MigrationVerdict {
  const refuse = (reason: string): MigrationVerdict => ({ allowed: false, reason: `run ${run.runId} cannot be migrated to version ${toVersion}: ${reason}` });
  if (run.agent !== agent.name) return refuse(`it is a run of agent ${run.agent}, not ${agent.name}`);
  if (run.status !== 'running') return refuse(`it is ${run.status}; only a live run is migrated`);
  if (agent.version !== toVersion) return refuse(`the deployed code is ${agent.version === undefined ? 'an agent without a version' : `version ${agent.version}`}`);
  if (run.fingerprint === toFingerprint) return refuse(`it runs on this code already (${toFingerprint})`);
  const problem = continuationProblem(run, agent, toFingerprint);
  if (problem === undefined) return { allowed: true };
  // Refused, the live run goes on where it is.
  return refuse(run.agentVersion === undefined ? problem : `${problem}; the run finishes on version ${run.agentVersion}`);
}

/**
 * Why `agent`'s code may not continue a conversation that `run`'s code began, or undefined when it
 * may: the same rule for a migration (the live run moves) and a fork (a copy of its first turns
 * goes on, lambdas/runs/fork.ts). The same code always may; other code only as another version
 * that names the run's version in `compatibleWith`.
 */
export function continuationProblem(run: Pick<RunRecord, 'agentVersion' | 'fingerprint'>, agent: Pick<AgentDefinition, 'version' | 'compatibleWith'>, toFingerprint: string): string | undefined {
  if (run.fingerprint === toFingerprint) return undefined;
  if (run.agentVersion === undefined) return 'it started on an agent that declares no version, which no version can declare compatible';
  if (run.agentVersion === agent.version) {
    return `it started on other code under the same version ${agent.version} (${run.fingerprint} → ${toFingerprint}): bump \`version\` and declare \`compatibleWith: ['${run.agentVersion}']\``;
  }
  if (!(agent.compatibleWith ?? []).includes(run.agentVersion)) {
    const declared = agent.compatibleWith?.length ? `it declares compatibleWith [${agent.compatibleWith.join(', ')}]` : 'it declares no compatibleWith';
    return `version ${agent.version ?? '(none)'} does not declare version ${run.agentVersion} compatible (${declared})`;
  }
  return undefined;
}

/** The alias new runs start on: it routes every new execution to the version the last deploy published (infra/agent-state-machine.ts). */
export const LIVE_ALIAS = 'live';

/** The state machine's own ARN (`arn:…:stateMachine:<name>`), from it, an alias's or a version's. */
export function unqualifiedArn(stateMachineArn: string): string {
  return stateMachineArn.split(':').slice(0, 7).join(':');
}
