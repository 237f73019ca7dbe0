import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StorageLedger } from '../../lambdas/ledger/storage-ledger.js';
import type { ModelClient } from '../../lambdas/records/messages.js';
import type { ApprovalRequested } from '../../lambdas/approvals/notify.js';
import type { ApprovalPolicy } from '../../lambdas/approvals/policy.js';
import type { AgentDefinition, DevWorld } from '../../lambdas/define.js';
import type { BreakerPolicy } from '../../lambdas/guards/breaker.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import type { EmbeddedLedgerOptions } from '../../lambdas/ledger/embedded-ledger.js';
import type { LedgerSealer } from '../../lambdas/ledger/seal.js';
import type { SpanSink } from '../../lambdas/telemetry/sink.js';
import type { Clock } from '../../lambdas/shared/ports.js';
import type { RecoveryPolicy } from '../../lambdas/steps/recover-run.js';
import type { CfnTemplateJson } from '../template/asl.js';
import type { TwinIam } from '../aws/iam/index.js';
import type { Timers } from '../engine/timers.js';
import type { CrashPoints } from './crash.js';
import type { LedgerKind } from '../state/ledger-files.js';
import type { DynamoDbLostAnswers } from '../aws/dynamodb-lost-answers.js';
import type { PriceOverrides } from '../../lambdas/models/prices.js';
import type { BudgetCaps } from '../../lambdas/records/ledger-records.js';
import type { LocalFleetBudget } from './fleet-budget.js';

/** What `startLocalStack` (local/runtime/local-stack.ts) is asked to run, and how. */
/** When the embedded ledger on disk acknowledges a write (`LocalStackOptions.durability`). */
export type Durability = 'sync' | 'async';

export interface LocalStackOptions<World extends DevWorld = DevWorld> {
  /** The agent to run: its steps, its simulated world and its scripted model. */
  readonly agent: AgentDefinition<any, any, World>;
  /** A data file the agent's simulated world serves (e.g. the day of refund requests). */
  readonly worldData?: string;
  /**
   * The agent's world, started by the caller (tests that hand it a fixture); the agent's
   * `dev.world` is started when absent.
   */
  readonly world?: World;
  /** Where the ledger and the provider's records live; in memory when absent (tests). */
  readonly stateDir?: string;
  /**
   * Where the twin's S3 keeps its objects (a batch's manifest): one account's buckets, which every
   * agent of a deployment reads alike (`savepoint serve` of several agents passes the state
   * directory's to each). @default `<stateDir>/s3`; in memory without a state directory
   */
  readonly s3Dir?: string;
  /**
   * The ledger: `embedded` (in this process; `ledger.jsonl` in the state directory) or `dynalite`
   * (the DynamoDB ledger on the emulator, over loopback: the full-fidelity path, `ledger/` in the
   * state directory). @default 'embedded'
   */
  readonly ledger?: LedgerKind;
  /**
   * With `ledger: 'dynalite'`: the answers of chosen DynamoDB writes that committed are lost — a
   * 500 InternalServerError after the commit, or a cut connection — as DynamoDB may lose them; the
   * SDK retries them (local/aws/dynamodb-lost-answers.ts). The stack's `dynamoDbLostAnswers` counts
   * what the twin did. @default none: every answer is delivered
   */
  readonly dynamoDbLostAnswers?: DynamoDbLostAnswers;
  /** Transient failures injected into model and provider requests. @default 0 */
  readonly failRate?: number;
  /** Seed of the injected failures. @default 1 */
  readonly seed?: number;
  /**
   * Milliseconds the engine waits before each retry, instead of the definition's backoff (which is
   * seconds to minutes): local time runs compressed. @default 20
   */
  readonly retryDelayMs?: number;
  /**
   * Milliseconds between tries while a circuit breaker is open (the definition says 30 s).
   * @default 600 (the definition's 30 s, compressed like the breaker)
   */
  readonly breakerRetryDelayMs?: number;
  /**
   * The circuit breakers' policy. Local time runs compressed (retries wait milliseconds, a run
   * makes ~10 provider calls a second), so the default compresses the breaker's window and
   * cooldown 50× too: injected independent failures do not look like an outage, a real outage
   * still opens it. @default 5 failures in 1.2 s, open 0.6 s
   */
  readonly breaker?: BreakerPolicy;
  /**
   * Lease of an in-flight tool call. Short locally: a lease only has to outlive a live call, and
   * after a crash the restarted engine should not wait long for the dead one's. `Agent.LeaseHeld`
   * retries wait half a lease each, so they outlast it. @default 1000
   */
  readonly leaseMs?: number;
  /**
   * Wraps the ledger every step, breaker and the approval API use, from outside (e.g.
   * `countingLedger`: how many round trips a step makes). @default none
   */
  readonly decorateLedger?: (ledger: Ledger) => Ledger;
  /**
   * Seals the ledger's records (lambdas/ledger/seal.ts). @default the state directory's key file
   * (`keys/ledger-seal.key`), or a random key in memory
   */
  readonly sealer?: LedgerSealer;
  /**
   * Where the run's OpenTelemetry spans go as the run goes (lambdas/telemetry/); `false`: nowhere.
   * @default the OTLP exporter the standard `OTEL_EXPORTER_OTLP_*` variables configure, off when none is set
   */
  readonly tracing?: SpanSink | false;
  /** Where the steps may be told to end the process (local/runtime/crash.ts). @default none */
  readonly crash?: CrashPoints;
  /**
   * Bound of automatic recoveries (failed executions, and runs the watchdog finds orphaned);
   * `false` turns the status-change rule off (the benchmark's restart-from-scratch baseline).
   */
  readonly recovery?: RecoveryPolicy | false;
  /**
   * How many times each "Execution Status Change" reaches the rules' targets (ExecutionStopped,
   * RecoverRun; a child agent's stack likewise): on AWS EventBridge delivers an event at least once,
   * and an asynchronously invoked function may get one event twice, even two copies at once
   * (local/aws/event-delivery.ts). A number (1 to 3) is that many deliveries, each after the last
   * settled; `{ times, overlapping: true }` that many at once. Tests of the handlers set it, to hold
   * them to the same end under duplicates. @default 1 (every other test's runs stay deterministic)
   */
  readonly statusChangeDeliveries?: number | { readonly times: number; readonly overlapping?: boolean };
  /**
   * The stack's clock: what the steps and the engine read. One that also arms timers (`after`)
   * runs the engine's Task timeouts and heartbeats as well: a test moving it past a Task's
   * TimeoutSeconds times the Task out with no real wait. @default the system clock, real timers
   */
  readonly clock?: Clock & Partial<Timers>;
  readonly codeVersion?: string;
  /**
   * Price overrides by model spec (`savepoint run --prices`), over the agent's `prices` and the
   * built-in table; part of every run's fingerprint. @default none
   */
  readonly prices?: PriceOverrides;
  /**
   * The deployment's ceilings on the budgets a run request may ask for (the construct's
   * `maxBudgets`), within the agent's own `maxBudgets` (lambdas/runs/budget-caps.ts); a run that
   * asks for nothing is held within them too.
   * @default none: the agent's `maxBudgets`, else its own budgets
   */
  readonly maxBudgets?: BudgetCaps;
  /** Ms a batch's item waits between two reads of its run, instead of the batch's pollSeconds (tests). @default the batch's */
  readonly batchPollWaitMs?: number;
  /**
   * The deployment's fleet budget (`savepoint run` / `serve --fleet-dollars-per-day …`, the
   * construct's `fleetBudget`): dollars per day and runs at once for the agent (and a stack), each
   * model call reserved within it (lambdas/records/fleet.ts); the stack's counters are the local
   * template's stack's (local/runtime/fleet-budget.ts), whose limits the agent's child agents
   * (`defineAgentTool`) share, as a SavepointStack's agents do. @default none
   */
  readonly fleetBudget?: LocalFleetBudget;
  /** A new approval waits for a person: the event approvers are told (with a signed link each). */
  readonly onApproval?: (approval: ApprovalRecord, event: ApprovalRequested) => void;
  /**
   * Who gets a signed link, and the policy. Locally one person is starter and approver, so
   * separation of duties is off by default. The approval API's caller decides only as one of the
   * policy's `approverPrincipals` (lambdas/approvals/people.ts), by default `principal` alone; IAM
   * ARNs among them are named in the local template's resource policy too, which the twin holds
   * such a caller to (local/aws/iam/api-gateway.ts).
   * @default one approver, this machine's user, by link and by the API; no second approver
   */
  /**
   * The loopback port of the approval and runs APIs (`savepoint serve --port`), and what else that
   * port serves outside the credential's paths (serve's console: local/services/approval-api.ts `fallback`),
   * and `pageUrl`: where its approval page is reached when something in front of the API relays it
   * (the front door of a serve of several agents: cli/serve-front.ts), which its signed links and
   * its published `approvalPage` then name.
   * @default any free port, nothing else, the page on the API's own port
   */
  readonly api?: {
    readonly port?: number;
    readonly fallback?: (request: IncomingMessage, response: ServerResponse) => boolean;
    readonly pageUrl?: string;
  };
  readonly approvals?: {
    readonly approvers?: readonly string[];
    readonly policy?: ApprovalPolicy;
    /** Who the approval API records as the caller of /approvals (on AWS: the IAM principal API Gateway verified). @default this machine's user */
    readonly principal?: string;
  };
  /**
   * Wraps each model client from outside, after crash injection's wrap (the benchmark's scripted
   * model replays recorded turns through it: a model that does no work); the agent's child agents'
   * (`defineAgentTool`) clients too, each wrapped with its own spec. @default none
   */
  readonly wrapModel?: (client: ModelClient, spec: string) => ModelClient;
  /** A model endpoint to use instead of the simulated model (tests of misbehaving models). */
  readonly modelUrl?: string;
  /**
   * Where the real providers (`anthropic:`, `openai:`, `bedrock:` models) are reached and with which
   * keys: `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `OPENAI_API_KEY`, … (lambdas/models/config.ts).
   * `sim:` models always go to the simulated model. @default process.env
   */
  readonly modelEnv?: Readonly<Record<string, string | undefined>>;
  /**
   * Milliseconds the engine waits out a provider's `retry-after` (the WaitRetryAfter state) instead
   * of its seconds: tests. @default the seconds the provider asked for
   */
  readonly retryAfterWaitMs?: number;
  /**
   * Per Task state name, milliseconds instead of its TimeoutSeconds (the fleet benchmark lifts them
   * past its simulated day). A test of a Task that times out moves a `clock` with timers past the
   * definition's own TimeoutSeconds instead. @default the definition's
   */
  readonly taskTimeoutMs?: Readonly<Record<string, number>>;
  /**
   * Per Task state name, milliseconds instead of its function's Timeout, for the invocations it
   * makes: what the fleet benchmark lifts with `taskTimeoutMs`, since a template's own Timeout is
   * at most Lambda's 900 s (the stack refuses a template with more, as CloudFormation does).
   * @default the template's
   */
  readonly functionTimeoutMs?: Readonly<Record<string, number>>;
  /**
   * Finished executions the engine keeps for DescribeExecution and GetExecutionHistory; past this
   * many the oldest is forgotten, as AWS forgets a closed execution after 90 days (LocalEngine's
   * `retainFinished`). @default 100
   */
  readonly retainFinishedExecutions?: number;
  /**
   * The account's Lambda concurrency quota (local/aws/lambda-concurrency.ts): invocations over it,
   * or over a function's `ReservedConcurrentExecutions`, are throttled as Lambda throttles them
   * (`Lambda.TooManyRequestsException`, retried by the state machine), and a template whose
   * reservations leave under 100 to the rest is refused at start and at deploy.
   * @default 1000 (Lambda's default quota)
   */
  readonly lambdaConcurrency?: number;
  /**
   * What the embedded ledger on disk keeps in memory of the runs and effects it is done with
   * (EmbeddedLedgerOptions' `retainFinishedRuns`, `retainEffects`, `listedFinishedRuns`): the
   * growth benchmark makes them small, so that they fill within its first runs. @default the ledger's
   */
  readonly ledgerMemory?: Pick<EmbeddedLedgerOptions, 'retainFinishedRuns' | 'retainEffects' | 'listedFinishedRuns'>;
  /**
   * When the embedded ledger on disk acknowledges a write. `async`: once it is in the operating
   * system's page cache — a killed process loses nothing acknowledged, a power loss or an OS crash
   * may lose the writes of the last seconds (docs/guarantees.md). `sync`: once
   * the log and then its head are on the disk (fdatasync each): a power loss loses nothing
   * acknowledged, at about three times the time of a step on this machine's disk.
   * @default 'async'
   */
  readonly durability?: Durability;
  /** Whether the simulated model is sent cache breakpoints (off: the uncached baseline). @default true */
  readonly promptCaching?: boolean;
  /** Environment for the agent's `deps` over the world's own (tests of misbehaving providers). */
  readonly agentEnv?: Readonly<Record<string, string>>;
  /**
   * The tool credentials a tool reads with `context.secret(name)`, by name: what the deployment's
   * `toolSecrets` secrets hold on AWS (local/aws/iam/services.ts `toolSecretsAs`). @default none
   */
  readonly toolSecrets?: Readonly<Record<string, string>>;
  /** Where the steps' error lines go. @default discarded (the execution history has them) */
  readonly log?: (line: string) => void;
  /** The synthesized template; synthesized in-process when absent. */
  readonly template?: CfnTemplateJson;
  /**
   * The twin's IAM (local/aws/iam): each function's Step Functions calls signed with its own role's
   * credentials and decided by that role's policies in the template, the state machine role's
   * invokes likewise. `false` runs without it. @default true
   */
  readonly iam?: boolean;
  /**
   * Step Functions' per-account API throttling (local/aws/sfn-api-throttling.ts), on the stack's clock: a call
   * past its bucket answers ThrottlingException. Off by default because local time runs compressed
   * (retries wait milliseconds), so wall-clock rates would throttle what AWS would not; a run on
   * a simulated clock (the fleet benchmark, a test's clock) turns it on. @default false
   */
  /**
   * For a child agent's stack (local/runtime/children.ts): the parent stack's ledger, which the
   * child's runs share as a deployment's agents share its table. @default a ledger of its own
   */
  readonly sharedLedger?: StorageLedger;
  /**
   * For another agent of the same stack (`template` holds several agents; this one's state machine
   * is the one the stack names for `agent.name`): the IAM of the first agent's stack, whose
   * authorizer and role credentials this stack's functions use, as one account's IAM serves every
   * function of a deployment (local/aws/iam/index.ts `twinIam`). With `sharedLedger`. @default its own
   */
  readonly sharedIam?: TwinIam;
  /**
   * `false`: the agent's child agents (`defineAgentTool`) get no stack; a call of an agent tool
   * reads its child from the ledger only (replay, which stands the recorded children in).
   * @default true
   */
  readonly childStacks?: boolean;
  readonly quotas?: boolean;
}
