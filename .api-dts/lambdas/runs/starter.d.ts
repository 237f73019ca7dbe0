import type { DecisionMac } from '../approvals/decision-mac.js';
/**
 * Who started a run, as something the caller cannot write into its input. Whoever may call
 * `StartExecution` writes the whole input, so a `startedBy` field proves nothing by itself. The
 * runs API (`POST /runs`: adapters/runs-http.ts) takes the caller from what its transport proved
 * — on AWS the IAM principal API Gateway verified (SigV4), locally the loopback server's user —
 * and signs it, with the request it starts, under a key only it may sign with (a KMS HMAC key:
 * the runs API may `GenerateMac`, StartRun only `VerifyMac`; a key file locally). StartRun records
 * `startedBy` only when the MAC verifies; otherwise the run has no recorded starter, whatever
 * the input says. A scheduled run is started by the schedule (runs/run-request.ts), never by a field.
 *
 * What the MAC covers: the starter and a digest of the rest of the request — run id, input,
 * config, model, fork — so a signed starter cannot be moved onto another run or input. A copied
 * signed input starts nothing new: the same run id resumes, joins or finds finished the run the
 * signer started.
 */
export declare const STARTER_FIELDS: readonly ['startedBy', 'startedByMac'];
/** The MAC's message: the starter and a SHA-256 of the request without the starter's fields. */
export declare function starterMessage(startedBy: string, request: Readonly<Record<string, unknown>>): string;
/** The request with its starter and the starter's MAC (what the runs API passes to StartExecution). */
export declare function signStarter<T extends Record<string, unknown>>(mac: DecisionMac, request: T, startedBy: string): Promise<T & {
    startedBy: string;
    startedByMac: string;
}>;
/**
 * The starter a run request proves: its `startedBy` when `startedByMac` verifies under the runs
 * API's key, else undefined (no key, no MAC, a MAC of another request or key).
 */
export declare function verifiedStarter(mac: DecisionMac | undefined, request: unknown): Promise<string | undefined>;
