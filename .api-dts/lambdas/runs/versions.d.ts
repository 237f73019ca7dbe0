import { type AgentDefinition } from '../define.js';
import type { RunRecord } from '../records/ledger-records.js';
import { type PriceTable } from '../models/prices.js';
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
export declare function codeFingerprint(agent: AgentDefinition, codeVersion: string, priceTable?: PriceTable): CodeFingerprint;
/** `version 2 (3f9c…)`, or the fingerprint alone for an agent that declares no version. */
export declare function describeVersion(version: string | undefined, fingerprint: string): string;
/**
 * Throws `Agent.VersionMismatch` when this code is not the code the run is bound to. A recorded
 * migration (or a forced resume) rebinds the run, so a mismatch here is always unexplained: a
 * deploy that swapped the code under a live execution, or an execution a migration superseded.
 */
export declare function checkVersion(run: RunRecord, agent: Pick<AgentDefinition, 'version'>, fingerprintOf: CodeFingerprint): string;
export type MigrationVerdict = {
    allowed: true;
} | {
    allowed: false;
    reason: string;
};
/**
 * Whether a live run may move to `agent`'s code: only when this version names the run's version
 * in `compatibleWith`. A pure function of the run and the definition (the CLI and StartRun ask it).
 */
export declare function migrationVerdict(run: Pick<RunRecord, 'runId' | 'status' | 'agent' | 'agentVersion' | 'fingerprint'>, agent: Pick<AgentDefinition, 'name' | 'version' | 'compatibleWith'>, toFingerprint: string, toVersion: string): MigrationVerdict;
/**
 * Why `agent`'s code may not continue a conversation that `run`'s code began, or undefined when it
 * may: the same rule for a migration (the live run moves) and a fork (a copy of its first turns
 * goes on, lambdas/runs/fork.ts). The same code always may; other code only as another version
 * that names the run's version in `compatibleWith`.
 */
export declare function continuationProblem(run: Pick<RunRecord, 'agentVersion' | 'fingerprint'>, agent: Pick<AgentDefinition, 'version' | 'compatibleWith'>, toFingerprint: string): string | undefined;
/** The state machine's own ARN (`arn:…:stateMachine:<name>`), from it, an alias's or a version's. */
export declare function unqualifiedArn(stateMachineArn: string): string;
