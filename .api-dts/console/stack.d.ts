import { type SFNClient } from '@aws-sdk/client-sfn';
import { type Deployment } from '../client/aws.js';
import type { AgentDefinition } from '../lambdas/define.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { RunRecord } from '../lambdas/records/ledger-records.js';
import type { AslDefinition } from '../local/template/asl.js';
import { type HistorySource } from './history.js';
import { type ConsoleOptions, type ConsoleServer } from './server.js';
/**
 * `savepoint console --stack <name>`: the console on a deployed stack. It reads and steers with the
 * operator's own AWS credentials through the same client the CLI's `--stack` path uses
 * (client/aws.ts): runs and the ledger from DynamoDB, execution histories and the definition from
 * the Step Functions API, decisions through the IAM-signed approval API (recorded as the operator's
 * principal), kills in the ledger, resumes through StartExecution. It holds no approval-link or
 * decision key: what it may do is what the operator's IAM policy allows.
 */
export declare function startStackConsole(deployment: Deployment, options?: {
    agent?: AgentDefinition;
    pollMs?: number;
} & Pick<ConsoleOptions, 'host' | 'port' | 'token' | 'log' | 'actor'>): Promise<ConsoleServer>;
/**
 * Execution histories from the Step Functions API. A finished execution's history is read once; a
 * running one's is brought up to date newest-first (`reverseOrder`) down to the newest event already
 * read, so a 20,000-event execution is paged through once, not on every refresh. A running
 * execution is asked again at most every `freshMs` (one page render asks several times); concurrent
 * asks share one read.
 */
export declare function sfnHistorySource(sfn: Pick<SFNClient, 'send'>, options?: {
    freshMs?: number;
    now?: () => number;
}): HistorySource;
/** The definition a run's executions ran (with versions, not necessarily the state machine's latest), from its newest execution that exists. */
export declare function executionDefinition(sfn: Pick<SFNClient, 'send'>): (run: RunRecord) => Promise<AslDefinition | undefined>;
/**
 * Live updates on AWS, where no engine tells this process what changed: the ledger is looked at
 * every `everyMs` (runs, pending approvals, the global kill) and a change is announced.
 */
export declare function pollLedger(ledger: Pick<Ledger, 'listRuns' | 'listPendingApprovals' | 'getGlobalKill'>, everyMs: number, log?: (line: string) => void): NonNullable<ConsoleOptions['subscribe']>;
