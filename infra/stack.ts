import { CfnOutput, CfnParameter, CfnResource, NestedStack, Stack, Token, type Duration, type StackProps } from 'aws-cdk-lib';
import { stackOperationProblem, templateQuotaProblems } from '../lambdas/shared/cloudformation-quotas.js';
import { Secret, type ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { Construct } from 'constructs';
import { checkModelTimeout } from '../lambdas/shared/timing.js';
import { DurableAgent, type DurableAgentProps } from './durable-agent.js';
import { LedgerTable } from './ledger-table.js';
import { setStackFleetBudget, type FleetBudgetProps } from './fleet-budget.js';
import { apiKeySecretEntries, modelSpecOf, type ApiKeySecrets, type ModelAccessProps } from './model-access.js';
import { MODEL_PROVIDERS } from '../lambdas/models/providers.js';
import { secretReferenceProblem } from '../lambdas/shared/aws-names.js';

/** A `SavepointStack`'s props: the stack's own, and the model and prices its agents share. */
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
   * references them; their values never enter the template. A provider that takes no key, or a name
   * Secrets Manager would refuse, fails the synth, naming it. @default none
   */
  readonly apiKeySecrets?: ApiKeySecrets<string>;
  /**
   * Model prices of every agent's runs (`DurableAgentProps.prices`); an agent's own `prices` prop
   * is applied over them, model by model.
   * @default none: each agent's prices over the built-in table
   */
  readonly prices?: DurableAgentProps['prices'];
  /**
   * The agents in nested stacks, over this stack's ledger, model, parameters and shared functions
   * (infra/control-plane.ts): `true`, each in a nested stack of its own; a number `n`, `n` agents to
   * a nested stack (in the order they are added), which then share its keys — fewer keys, so less
   * idle cost (`npm run bench -- --deploy`). An agent is about 75 resources and a template holds at
   * most 500, so this stack holds five; nested, up to one operation's 2,500 resources across the
   * stacks (synth checks both). The agents' outputs stay on this stack, where `savepoint --stack`
   * finds them. Choose it before the first deploy: moving an agent into or out of a nested stack,
   * or into another one, replaces its resources.
   * @example 4
   * @default false (every agent in this stack)
   */
  readonly agentsInNestedStacks?: boolean | number;
  /**
   * Whether this stack sets API Gateway's account-wide CloudWatch Logs role (once, for all its
   * agents' approval APIs); `false` if it is set already, by another stack or by you.
   * @default true
   */
  readonly apiGatewayAccount?: boolean;
  /**
   * The fleet budget all the stack's agents share: dollars per UTC day and runs at once, over each
   * agent's own (`fleetBudget` of `addAgent`), each model call reserved within both
   * (infra/fleet-budget.ts). Its counters are named for this stack's name.
   * @example { dollarsPerDay: 500 }
   * @default none
   */
  readonly fleetBudget?: FleetBudgetProps;
}

/** The resources `stack`'s own template declares (not its nested stacks'). */
function resourcesOf(stack: Stack): number {
  return stack.node.findAll().filter((node) => Stack.of(node) === stack && node instanceof CfnResource).length;
}

/** CloudFormation's refusals of `stack`'s template by count (lambdas/shared/cloudformation-quotas.ts), each naming the stack. */
function quotaProblemsOf(stack: Stack): string[] {
  const own = stack.node.findAll().filter((node) => Stack.of(node) === stack);
  const count = (type: abstract new (...args: never[]) => unknown) => own.filter((node) => node instanceof type).length;
  return templateQuotaProblems({ resources: resourcesOf(stack), outputs: count(CfnOutput), parameters: count(CfnParameter) }).map((problem) => `${stack.node.path}: ${problem}`);
}

/** The refusal of the one operation that deploys `stack` with its nested stacks (2,500 resources across them), or none. */
function operationProblemOf(stack: Stack, nested: readonly NestedStack[]): string[] {
  const problem = stackOperationProblem([stack, ...nested].reduce((sum, each) => sum + resourcesOf(each), 0));
  return problem ? [`${stack.node.path}: ${problem}`] : [];
}

/**
 * A stack for savepoint agents: one ledger table they share, their model (by configuration: a
 * `provider:model-id`, the API keys in Secrets Manager, Bedrock through the functions' role), and
 * `addAgent` for each agent deployed side by side. A `sim:` model (the default of the example
 * agents) is served at a deploy-time parameter, `ModelApiUrl`.
 */
export class SavepointStack extends Stack {
  /** The ledger table every agent of the stack shares. */
  readonly ledger: LedgerTable;
  readonly #models: ModelAccessProps;
  readonly #codeVersion: string;
  /** Agents to a nested stack; 0: none nested. */
  readonly #perNested: number;
  #nestedStack?: { stack: NestedStack; agents: number };
  readonly #apiGatewayAccount: boolean;
  readonly #prices: DurableAgentProps['prices'];

  constructor(scope: Construct, id: string, props: SavepointStackProps = {}) {
    super(scope, id, props);
    this.ledger = new LedgerTable(this, 'Ledger');
    // Checked here, naming this stack's prop: an unknown provider was ignored, and a name Secrets Manager refuses failed only the first model call.
    for (const [provider, name] of apiKeySecretEntries(`SavepointStack ${id}`, 'apiKeySecrets', props.apiKeySecrets)) {
      if (typeof name !== 'string') throw new Error(`SavepointStack ${id}: apiKeySecrets.${provider}: expected a secret's name or ARN, got ${JSON.stringify(name) ?? String(name)}`);
      const problem = !Token.isUnresolved(name) && secretReferenceProblem(name);
      if (problem) throw new Error(`SavepointStack ${id}: apiKeySecrets.${provider}: ${JSON.stringify(name)} ${problem}`);
    }
    const secret = (name: string | undefined, secretId: string) =>
      name === undefined ? undefined : name.startsWith('arn:') ? Secret.fromSecretCompleteArn(this, secretId, name) : Secret.fromSecretNameV2(this, secretId, name);
    // Each provider's key secret, imported under its descriptor's construct id.
    const keys = Object.fromEntries(
      MODEL_PROVIDERS.descriptors.flatMap((descriptor) => {
        const imported = descriptor.secret && secret((props.apiKeySecrets as Partial<Record<string, string>> | undefined)?.[descriptor.name], descriptor.secret.constructId);
        return imported ? [[descriptor.name, imported]] : [];
      }),
    ) as ApiKeySecrets<ISecret>;
    // Checked here, naming this stack's prop and the value as given: the agents' model access would
    // refuse it only at the first addAgent, under its own name (`models.timeout`).
    if (props.modelTimeout) {
      try {
        checkModelTimeout(props.modelTimeout.toMilliseconds(), 'modelTimeout');
      } catch (error) {
        throw new Error(`SavepointStack ${id}: ${(error as Error).message} (${props.modelTimeout.toHumanString()})`);
      }
    }
    // Checked here, naming this stack's props: an agent would check them only at addAgent, as its own `models.otherModels`.
    const simulated = props.model === undefined || modelSpecOf(`SavepointStack ${id}`, 'model', props.model).provider === 'sim';
    for (const [index, spec] of (props.otherModels ?? []).entries()) modelSpecOf(`SavepointStack ${id}`, `otherModels[${index}]`, spec);
    this.#models = {
      ...(props.model !== undefined && { model: props.model }),
      ...(props.otherModels && { otherModels: props.otherModels }),
      ...(props.modelTimeout && { timeout: props.modelTimeout }),
      ...(Object.keys(keys).length > 0 && { apiKeySecrets: keys }),
      ...(simulated && {
        simulatorUrl: new CfnParameter(this, 'ModelApiUrl', {
          type: 'String',
          description: 'Base URL of the simulated model (sim: models; POST {url}/v1/messages).',
          allowedPattern: '^https?://.+',
        }).valueAsString,
      }),
    };
    this.#codeVersion = props.codeVersion ?? 'dev';
    const nested = props.agentsInNestedStacks ?? false;
    if (typeof nested === 'number' && !(Number.isInteger(nested) && nested >= 1 && nested <= 5)) {
      throw new Error(`SavepointStack ${id}: agentsInNestedStacks must be true, false or a whole number of agents to a nested stack from 1 to 5 (an agent is about 75 of a template's 500 resources), got ${nested}`);
    }
    this.#perNested = nested === true ? 1 : nested === false ? 0 : nested;
    this.#apiGatewayAccount = props.apiGatewayAccount ?? true;
    this.#prices = props.prices;
    setStackFleetBudget(this, props.fleetBudget);
    // CloudFormation refuses a template past its quotas only at deploy; synth says it first, for
    // this stack and each agent's nested stack (CDK itself checks only the resources).
    // and for the one operation that deploys them all.
    this.node.addValidation({
      validate: () => {
        const nested = this.node.findAll().filter((node): node is NestedStack => node instanceof NestedStack);
        return [...[this, ...nested].flatMap(quotaProblemsOf), ...operationProblemOf(this, nested)];
      },
    });
  }

  /** Deploys an agent on the shared ledger and model (in a nested stack of its own with `agentsInNestedStacks`). */
  addAgent(id: string, props: Omit<DurableAgentProps, 'table' | 'codeVersion'>): DurableAgent {
    const nested = this.#nestedStackFor(id, props.agentName);
    const prices = this.#prices || props.prices ? { ...this.#prices, ...props.prices } : undefined;
    const agent = new DurableAgent(nested ?? this, id, { models: this.#models, table: this.ledger, codeVersion: this.#codeVersion, apiGatewayAccount: this.#apiGatewayAccount, ...props, ...(prices && { prices }) });
    // A nested stack's outputs are not its parent's: each of this agent's is repeated here, by the same description.
    for (const output of nested ? agent.node.findAll().filter((node): node is CfnOutput => node instanceof CfnOutput) : []) {
      new CfnOutput(this, `${id}${output.node.path.split('/').slice(2).join('')}`, { value: output.value, ...(output.description !== undefined && { description: output.description }) });
    }
    return agent;
  }

  /**
   * The nested stack of the next agent: a new one, named for the agent, when the last one is full
   * (`agentsInNestedStacks`); none when agents are not nested. One agent to a nested stack keeps the
   * name it always had (`<id>Stack`).
   */
  #nestedStackFor(id: string, agentName: string): NestedStack | undefined {
    if (this.#perNested === 0) return undefined;
    if (!this.#nestedStack || this.#nestedStack.agents >= this.#perNested) {
      this.#nestedStack = { stack: new NestedStack(this, `${id}Stack`, { description: `savepoint agent ${agentName}${this.#perNested > 1 ? ' and the next ones' : ''}` }), agents: 0 };
    }
    this.#nestedStack.agents += 1;
    return this.#nestedStack.stack;
  }

  /** A deploy-time parameter (e.g. an agent's provider URL). */
  parameter(id: string, description: string, allowedPattern?: string): string {
    return new CfnParameter(this, id, { type: 'String', description, ...(allowedPattern && { allowedPattern }) }).valueAsString;
  }
}
