import type { SFNClient } from '@aws-sdk/client-sfn';
import { type RunVerification } from '../lambdas/ledger/seal.js';
import { publicApproval } from '../lambdas/adapters/approval-http.js';
import { type RunReport } from '../lambdas/runs/report.js';
import type { AgentDefinition } from '../lambdas/define.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { RunRecord } from '../lambdas/records/ledger-records.js';
import { type DecideResult } from '../lambdas/approvals/decision.js';
import { type Clock } from '../lambdas/shared/ports.js';
import { type DecisionMac } from '../lambdas/approvals/decision-mac.js';
import type { ApprovalPolicy, Identity } from '../lambdas/approvals/policy.js';
import type { ReplayResult } from '../local/replay/index.js';
import type { StartRunBody } from '../lambdas/runs/start-route.js';
/**
 * The client applications use to drive savepoint runs: start a run (idempotent on its run id),
 * read its status and result, wait for it, cancel it, list and decide approvals. The CLI is built
 * on it. It speaks to one deployment through the same parts the steps use — the Step Functions
 * API, the ledger, the approval API — so it works the same against the local engine (loopback
 * endpoints) and a deployed stack (the real endpoints).
 */
/**
 * A run's lifecycle in the shape MCP Tasks and OpenAI background mode use, next to savepoint's own
 * status: `input_required` while a person's decision is awaited.
 */
export type Lifecycle = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
export declare function lifecycleOf(status: RunRecord['status'], pendingApprovals: number): Lifecycle;
export type PublicApproval = ReturnType<typeof publicApproval>;
export interface RunView {
    runId: string;
    lifecycle: Lifecycle;
    /** savepoint's own status and figures (the run report). */
    report: RunReport;
    /** Decisions the run waits for. */
    approvals: PublicApproval[];
}
export interface StartRequest {
    /** The run's input, checked by the agent's `input` schema when the run starts. */
    input: unknown;
    /** The idempotency key of the whole run. @default the agent's `runId(input)` (needs `agent`) */
    runId?: string;
    /** Budgets and other settings for this run (`RunConfig`). */
    config?: Record<string, unknown>;
    /** Resume even though the code changed since the run started. */
    force?: boolean;
}
/**
 * A fork of a run (lambdas/runs/fork.ts): a new run whose turns before `at` are the parent's,
 * copied from its ledger without any call, then live on the deployment's code.
 */
export interface ForkOptions {
    /** The fork's first turn of its own. */
    at: number;
    /** `reuse`: a write the parent made is answered from its record; `dry`: no write is sent. @default 'reuse' */
    effects?: 'reuse' | 'dry';
    /** The fork's budgets count only its own work. @default false: it inherits what the parent spent */
    freshBudget?: boolean;
    /** The fork's run id. @default `<parent>-fork-<at>` */
    runId?: string;
    /** The fork's input instead of the parent's. @default the parent's */
    input?: unknown;
    /** The model of the fork's own turns (`provider:model-id`). @default the parent's */
    model?: string;
    /** Edited results of the tool calls of turn `at - 1`, as the fork's first turn shows them. @default none */
    results?: {
        call: number;
        result: unknown;
    }[];
}
/** A decision as the approval API takes it: who decides is who the API authenticated, never a field. */
export interface DecisionBody {
    decision: 'approve' | 'reject';
    reason?: string;
}
export interface ClientParts {
    /** The ledger of the deployment (DynamoDB on AWS; the local engine's otherwise). */
    ledger: Ledger;
    /** The Step Functions API of the deployment and the agent's state machine: what `start` needs. */
    sfn?: SFNClient;
    stateMachineArn?: string;
    /**
     * Starts runs through the deployment's runs API (`POST /runs`), which records the caller it
     * authenticated as the run's starter (separation of duties); without it, `start` calls
     * StartExecution itself and the run has no recorded starter.
     */
    startRun?: (body: StartRunBody) => Promise<{
        runId: string;
        executionArn: string;
    }>;
    /** Decides an approval through the deployment's approval API (so that the waiting execution resumes). */
    decide?: (approvalId: string, body: DecisionBody) => Promise<DecideResult>;
    /**
     * Who this client decides as when it records decisions in the ledger itself (no approval API),
     * with the key that signs them and the policy. Without an identity such decisions are refused.
     */
    ledgerDecisions?: {
        identity: Identity;
        decisionMac?: DecisionMac;
        policy?: ApprovalPolicy;
    };
    /** The agent the deployment runs: derives run ids, and adds the agent's own summary to reports. */
    agent?: AgentDefinition;
    clock?: Clock;
    /** How `wait` waits between two looks at the run. @default 500 ms of real time */
    pause?: (ms: number, signal?: AbortSignal) => Promise<void>;
}
export interface SavepointClient {
    /** Starts the run, or resumes it if it is unfinished; a finished run id is a no-op. */
    start(request: StartRequest): Promise<{
        runId: string;
        executionArn: string;
    }>;
    status(runId: string): Promise<RunView | undefined>;
    /** Resolves when the run is no longer working (finished, or waiting for a person when `untilInput`). */
    wait(runId: string, options?: {
        untilInput?: boolean;
        signal?: AbortSignal;
        everyMs?: number;
    }): Promise<RunView>;
    /** Stops the run before its next step; a pending approval of it is rejected so it stops now. */
    cancel(runId: string, options: {
        by: string;
        reason?: string;
    }): Promise<RunView>;
    approvals(): Promise<PublicApproval[]>;
    decide(approvalId: string, decision: 'approve' | 'reject', options?: {
        reason?: string;
    }): Promise<DecideResult>;
    /**
     * Moves a live run to the deployed code (`savepoint migrate`): a new execution on the newest
     * version takes the run over if that version is `to` and declares the run's version compatible
     * (lambdas/runs/versions.ts); refused, it throws naming why and nothing changes.
     */
    migrate(runId: string, options: {
        to: string;
        by: string;
        signal?: AbortSignal;
    }): Promise<RunView>;
    /**
     * Verifies runs' sealed records (lambdas/ledger/seal.ts): one run, or every run (`'all'`, at most
     * 1,000, newest first). `undefined` for a run id the ledger does not hold.
     */
    verify(runs: string | 'all'): Promise<RunVerification[] | undefined>;
    /**
     * The hazard report of a fork, before it starts: the parent's writes from the fork point on and
     * how the fork treats a repeat of each, then what the fork changes against its parent (the code,
     * the input, the model, edited results). Lines for a person; nothing is started.
     */
    forkReport(parentRunId: string, options: ForkOptions): Promise<string[]>;
    /**
     * Starts a fork of a finished or stopped run (`savepoint fork`): a `StartExecution` whose StartRun
     * copies the parent's turns before `options.at`; refused by StartRun (the execution fails) when
     * this code may not continue them (lambdas/runs/versions.ts) or an edit names no such call.
     *
     * @example
     * const lines = await client.forkReport('day1', { at: 12, effects: 'dry' });
     * console.log(lines.join('\n'));
     * const { runId } = await client.fork('day1', { at: 12, effects: 'dry' });
     * const view = await client.wait(runId);
     */
    fork(parentRunId: string, options: ForkOptions): Promise<{
        runId: string;
        executionArn: string;
    }>;
    /**
     * Replays a finished or stopped run on `agent`'s code with no live call (local/replay/): on this
     * machine's engine, from this client's ledger (a deployed stack's too). `identical`, or the first
     * divergence. Loads the local engine on first use.
     */
    replay(runId: string, options?: {
        agent?: AgentDefinition;
    }): Promise<ReplayResult>;
}
export declare function createClient(parts: ClientParts): SavepointClient;
/**
 * Starts runs through a runs API (`POST {url}`, the approval API's `/runs`): its 4xx answers are
 * errors naming the problem, as the API words them.
 */
export declare function runsApiStarter(url: string, fetchImpl?: typeof fetch): NonNullable<ClientParts['startRun']>;
/** The runs API of an approval API (`…/approvals` → `…/runs`). */
export declare function runsUrlOf(approvalApiUrl: string): string;
/**
 * Decides through an approval API (`POST {url}/{approvalId}`): the route a person's decision takes,
 * which also resumes the waiting execution. 404 and 409 are answers, anything else an error.
 */
export declare function approvalApiDecider(url: string, fetchImpl?: typeof fetch): NonNullable<ClientParts['decide']>;
/** Whether `error` is a connection to a local engine that has ended (refused, or reset as it closed). */
export declare function engineGone(error: unknown): boolean;
