import { Stack, type Duration, type StackProps } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { DurableAgent, type DurableAgentProps } from './durable-agent.js';
import { LedgerTable } from './ledger-table.js';
import type { ApiKeySecrets } from './model-access.js';
export interface SavepointStackProps extends StackProps {
    /** Version string recorded in every run's fingerprint. @default 'dev' */
    readonly codeVersion?: string;
    /** The model of every agent's runs (`provider:model-id`), over each agent's own. @default each agent's */
    readonly model?: string;
    /** How long one model call may take (`ModelAccessProps.timeout`). @default Duration.seconds(60) */
    readonly modelTimeout?: Duration;
    /** Other models runs may use (fallbacks, per-run `model`s): granted too. @default none */
    readonly otherModels?: readonly string[];
    /**
     * Names (or ARNs) of existing Secrets Manager secrets holding the providers' API keys. The stack
     * references them; their values never enter the template. @default none
     */
    readonly apiKeySecrets?: ApiKeySecrets<string>;
    /**
     * Model prices of every agent's runs (`DurableAgentProps.prices`); an agent's own `prices` prop
     * is applied over them, model by model.
     * @default none: each agent's prices over the built-in table
     */
    readonly prices?: DurableAgentProps['prices'];
    /**
     * Each agent in a nested stack of its own, over this stack's ledger, model and parameters. An
     * agent is about 130 resources and a stack holds at most 500, so a stack of its own holds three;
     * nested, any number (each nested stack has its own 500). The agents' outputs stay on this stack,
     * where `savepoint --stack` finds them. Choose it before the first deploy: moving an agent into or
     * out of a nested stack replaces its resources.
     * @default false (every agent in this stack)
     */
    readonly agentsInNestedStacks?: boolean;
    /**
     * Whether this stack sets API Gateway's account-wide CloudWatch Logs role (once, for all its
     * agents' approval APIs); `false` if it is set already, by another stack or by you.
     * @default true
     */
    readonly apiGatewayAccount?: boolean;
}
/**
 * A stack for savepoint agents: one ledger table they share, their model (by configuration: a
 * `provider:model-id`, the API keys in Secrets Manager, Bedrock through the functions' role), and
 * `addAgent` for each agent deployed side by side. A `sim:` model (the default of the example
 * agents) is served at a deploy-time parameter, `ModelApiUrl`.
 */
export declare class SavepointStack extends Stack {
    #private;
    readonly ledger: LedgerTable;
    constructor(scope: Construct, id: string, props?: SavepointStackProps);
    /** Deploys an agent on the shared ledger and model (in a nested stack of its own with `agentsInNestedStacks`). */
    addAgent(id: string, props: Omit<DurableAgentProps, 'table' | 'codeVersion'>): DurableAgent;
    /** A deploy-time parameter (e.g. an agent's provider URL). */
    parameter(id: string, description: string, allowedPattern?: string): string;
}
