import { Duration } from 'aws-cdk-lib';
import { RestApi } from 'aws-cdk-lib/aws-apigateway';
import { Schedule } from 'aws-cdk-lib/aws-events';
import { StateMachine } from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import { type AgentDefinition } from '../lambdas/define.js';
import { type Price } from '../lambdas/models/prices.js';
import { BudgetCaps } from '../lambdas/records/ledger-records.js';
import { type ApprovalSettings } from './approvals.js';
import { LedgerTable } from './ledger-table.js';
import { type ModelAccessProps } from './model-access.js';
import { type AlarmThresholds } from './observability.js';
import { type GenAiTracing } from './tracing.js';
export interface DurableAgentProps {
    /** The agent's name, as its `defineAgent({ name })` says: it names the state machine and the runs. */
    readonly agentName: string;
    /** The agent's module (a file exporting `defineAgent(…)`), bundled into each function. */
    readonly entry: string;
    /**
     * The model of this stack's runs (`provider:model-id`, over the agent's own; a run request may
     * still name another), where its keys live, and the grants CallModel gets for them.
     * @default the agent's model, no secrets, no Bedrock grant
     */
    readonly models?: ModelAccessProps;
    /**
     * When to start a run on its own (the agent's `scheduled` turns the event time into the input).
     * @default no schedule
     */
    readonly schedule?: Schedule;
    /**
     * The REST API people and machines decide approvals through (IAM-signed).
     * @default true
     */
    readonly approvalApi?: boolean;
    /**
     * The ledger. Agents of one app may share one (their runs are apart by run id).
     * @default a table of the agent's own
     */
    readonly table?: LedgerTable;
    /**
     * Environment the agent's `deps` read (e.g. its providers' base URLs): every variable the agent
     * declares in its `env` must be set here (or by Lambda itself), else synth fails naming it.
     * @default none
     */
    readonly environment?: Record<string, string>;
    /**
     * The agent's definition, as the app imports it (`import agent from './my-agent.js'`): its `name`
     * must be `agentName`, and each variable of its `env` must reach the functions (`environment`),
     * else synth fails naming the variable and this prop — not the first tool call on AWS.
     * @default not checked
     */
    readonly agent?: Pick<AgentDefinition, 'name' | 'env'>;
    /** Recorded in every run's fingerprint. @default 'dev' */
    readonly codeVersion?: string;
    /** Recoveries in a row without progress before a run is given up. @default 3 */
    readonly maxRecoveries?: number;
    /**
     * State machine versions kept whatever else holds: every 6 hours the version pruner deletes
     * older ones that no alias routes to, that run no execution and whose last execution ended over
     * an hour ago (lambdas/steps/prune-versions.ts), so deploys never reach the 1,000-version quota.
     * @example 50
     * @default DEFAULT_KEEP_VERSIONS (20)
     */
    readonly keepVersions?: number;
    /**
     * The public approval page (`/decide/{approvalId}`, open to anyone with a link): its own throttle
     * per method (the signed routes keep the stage's 10 rps, burst 20), and a WAF web ACL to attach
     * to the API's stage (e.g. a rate-based rule per source IP). Ignored without the approval API.
     * @default throttle 5 rps, burst 10, per method; no web ACL
     */
    readonly approvalPage?: ApprovalPageProps;
    /**
     * Whether this app sets API Gateway's account-wide CloudWatch Logs role (`AWS::ApiGateway::Account`,
     * once per top-level stack, whatever the number of agents) for the approval API's execution logs.
     * `false`: it is set already, by another stack or by you.
     * @default true
     */
    readonly apiGatewayAccount?: boolean;
    /** Who is told and may decide, and the policy (infra/approvals.ts). @default no links, separation of duties on */
    readonly approvals?: ApprovalSettings;
    /** When the agent's alarms go off (infra/observability.ts). @default see AlarmThresholds */
    readonly alarms?: AlarmThresholds;
    /** OpenTelemetry GenAI traces of every model and tool call, over OTLP (infra/tracing.ts). @default off */
    readonly tracing?: GenAiTracing;
    /**
     * The longest `timeoutMs` of the agent's tools (`maxToolTimeoutMs(agent)`): infra does not load
     * the agent, so it is said here. CallTool's Lambda timeout, its Task's and a tool claim's lease
     * derive from it; a run of an agent whose tools wait longer fails at its start, naming both.
     * @example Duration.minutes(2)
     * @default Duration.millis(DEFAULT_TOOL_TIMEOUT_MS) (20 s)
     */
    readonly toolTimeout?: Duration;
    /**
     * How many tool calls of one model turn run at once: the calls a model asks for together are
     * independent of each other, so they need not wait for one another (a call held for a person's
     * approval holds back none of the others). `1` runs them one at a time. From 1 to 40.
     * @example 4
     * @default 10 (DEFAULT_TOOL_CONCURRENCY)
     */
    readonly toolConcurrency?: number;
    /**
     * Model prices by `provider:model-id`, in dollars per million tokens, over the built-in table
     * and the agent's own `prices`: for a model the table lacks, or an account's own prices. Every
     * function gets them (they are part of each run's fingerprint); checked at synth.
     * @example { 'bedrock:eu.anthropic.claude-sonnet-4-5-20250929-v1:0': { inputPerMTok: 3.3, outputPerMTok: 16.5, cacheWritePerMTok: 4.125, cacheReadPerMTok: 0.33 } }
     * @default none: the agent's prices over the built-in table (lambdas/models/prices.ts)
     */
    readonly prices?: Readonly<Record<string, Price>>;
    /**
     * The most a run request (the runs API, `StartExecution`, `savepoint --stack … run --max-…`)
     * may ask for, per budget, within the agent's own `maxBudgets`: a request above it is refused,
     * naming the budget (lambdas/runs/budget-caps.ts). Checked at synth.
     * @example { maxDollars: 20, maxSteps: 1_000 }
     * @default none: the agent's `maxBudgets`, else its own budgets (a starter may lower them, not raise them)
     */
    readonly maxBudgets?: BudgetCaps;
}
/** The `MAX_BUDGETS` variable of StartRun and the runs API (lambdas/adapters/aws-deps.ts), or none; a bad ceiling fails the synth, naming it. */
export declare function maxBudgetsEnvironment(id: string, maxBudgets: DurableAgentProps['maxBudgets']): Record<string, string>;
/** The `PRICES` variable of every function (lambdas/adapters/aws-deps.ts), or none; a bad price fails the synth, naming it. */
export declare function pricesEnvironment(id: string, prices: DurableAgentProps['prices']): Record<string, string>;
/**
 * CallTool's Lambda timeout and a claim's lease, from the longest tool timeout: the function has
 * 10 s beyond the tool for its ledger work, and the lease 10 s beyond the function, so a live call
 * is never taken over (its Task allows the function TASK_TIMEOUT_MARGIN more: infra/agent-state-machine.ts).
 */
export declare function callToolTimeouts(toolTimeout: Duration): {
    lambda: Duration;
    leaseMs: number;
};
export interface ApprovalPageProps {
    /** Requests per second and burst for each of the page's methods. @default { rateLimit: 5, burstLimit: 10 } */
    readonly throttle?: {
        readonly rateLimit: number;
        readonly burstLimit: number;
    };
    /** The ARN of a regional WAFv2 web ACL to associate with the approval API's stage. @default none */
    readonly webAclArn?: string;
}
/**
 * One agent, durable on AWS: its Standard state machine (the generic loop: nothing in it names
 * the agent or a tool), one Lambda function per step kind bundled with the agent's module, the
 * ledger grants, automatic recovery, the kill-by-StopExecution rule, the approval expiry sweep,
 * and optionally a schedule and the approval API. Several can live in one app, side by side.
 */
export declare class DurableAgent extends Construct {
    readonly stateMachine: StateMachine;
    readonly ledger: LedgerTable;
    readonly api?: RestApi;
    constructor(scope: Construct, id: string, props: DurableAgentProps);
}
/** What the CLI and the client find a deployed agent by: `savepoint:<agent>:<output>` (cli/stack.ts). */
export type AgentOutput = 'StateMachineArn' | 'StateMachineAliasArn' | 'LedgerTableName' | 'LedgerSealSecretArn' | 'ApprovalApiUrl';
export declare function outputDescription(agentName: string, output: AgentOutput): string;
