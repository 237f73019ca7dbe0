import type { SFNClient } from '@aws-sdk/client-sfn';
import { type ErrorLog } from '../../lambdas/adapters/middleware.js';
import type { AgentDefinition, DevWorld } from '../../lambdas/define.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import { type Clock } from '../../lambdas/shared/ports.js';
import { type StepName } from '../../lambdas/shared/steps.js';
import { type ApprovalSetup } from '../../lambdas/wiring/create-steps.js';
import type { ModelServer } from '../../sim/model-server.js';
import type { LocalEngine } from '../engine/local-engine.js';
import type { TwinIam } from '../aws/iam/index.js';
import type { SfnQuotas } from '../aws/sfn-api-throttling.js';
import type { localApprovalSetup } from './approvals.js';
import type { LocalStackOptions } from './options.js';
import type { LocalHandlers } from './tasks.js';
/** What the local stack has started that the steps' clients point at. */
export interface LocalWiring<World extends DevWorld = DevWorld> {
    readonly options: LocalStackOptions<World>;
    readonly ledger: Ledger;
    /** The ledger as a step's function sees it: its calls authorized as its role (local/aws/iam/dynamodb.ts), or `ledger` without IAM. */
    readonly ledgerOf: (step: StepName) => Ledger;
    readonly clock: Clock;
    readonly model: ModelServer;
    readonly world: World;
    readonly sfn: SFNClient;
    /** The client a step's function calls Step Functions with: signed as its own role (local/runtime/sfn-clients.ts). */
    readonly sfnAs: (step: StepName) => SFNClient;
    readonly engine: LocalEngine;
    /** Where the functions start runs (their STATE_MACHINE_ARN on AWS: the alias, when the template has one). */
    readonly stateMachineArn: string;
    /** The twin's IAM and quotas on the in-process history read, which makes no endpoint call. */
    readonly iam?: Pick<TwinIam, 'authorizeAs'>;
    readonly quotas?: Pick<SfnQuotas, 'take'>;
    readonly leaseMs: number;
    readonly approvals: ReturnType<typeof localApprovalSetup>;
    /** The approval machinery as a step's function uses it: its calls to AWS authorized as its role (local/aws/iam/services.ts). */
    readonly approvalsOf: (step: StepName) => ApprovalSetup;
    /** A new approval waits: its deadline timer is armed (local/runtime/approvals.ts). */
    readonly armDeadline: (approval: ApprovalRecord) => void;
    /** The invocations in flight, which a closing stack waits for. */
    readonly inFlight: Set<Promise<unknown>>;
    readonly closing: () => boolean;
}
type StepFunction = (event: unknown, signal?: AbortSignal) => Promise<unknown>;
export interface LocalInvocation {
    /** The function's timeout (its `Timeout`), in milliseconds. */
    readonly timeoutMs: number;
    /** What the invocation's time is counted and its early timeout armed on. */
    readonly clock: Clock;
    readonly log: ErrorLog;
    /** The Task's timeout, which aborts the invocation as well. */
    readonly taskSignal?: AbortSignal;
}
/**
 * One invocation of a step's function, as a Lambda container runs it: in the same middy handler as
 * on AWS, with its own abort signal, which fires `TIMEOUT_EARLY_MS` before the function's timeout
 * and fails the invocation with middy's TimeoutError. Not middy's early timeout: its signal is one
 * for the whole process (harmless on AWS, one invocation per container at a time), and the runtime
 * runs many invocations of a function at once (a Map's tool calls, several runs), so one timing out
 * would abort them all. Timed on `clock`'s timers, so a test's clock fires it with no real wait.
 */
export declare function invokeLocally(step: StepName, fn: StepFunction, event: unknown, invocation: LocalInvocation): Promise<unknown>;
/**
 * The handlers of one version of the agent: its steps (lambdas/wiring/create-steps.ts) inside the
 * same middy handlers as on AWS, their clients pointed at this machine.
 */
export declare function localHandlers<World extends DevWorld>(agent: AgentDefinition<any, any, World>, codeVersion: string, wiring: LocalWiring<World>): LocalHandlers;
export {};
