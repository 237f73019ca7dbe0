import { Duration, Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { ENV } from '../lambdas/models/config.js';
import { MODEL_PROVIDERS } from '../lambdas/models/providers.js';
import { parseModelSpec, type ModelSpec } from '../lambdas/models/spec.js';
import { checkModelTimeout, DEFAULT_MODEL_TIMEOUT_MS, modelStepTimeoutMs } from '../lambdas/shared/timing.js';

/** How an agent's CallModel reaches its models on AWS. */
export interface ModelAccessProps {
  /** The model runs use unless their request names one (`provider:model-id`). @default the agent's `model` */
  readonly model?: string;
  /**
   * Other models runs may use — the agent's `fallbackModel`, per-run `model`s — so that their
   * grants are made too (Bedrock: `bedrock:InvokeModel` on each, and nothing else). @default none
   */
  readonly otherModels?: readonly string[];
  /**
   * The Secrets Manager secrets holding the providers' API keys (the secret string is the key).
   * Only CallModel may read them; the key is never in an environment variable or the template.
   * @default none (Bedrock needs no key: the function's role)
   */
  readonly apiKeySecrets?: ApiKeySecrets<ISecret>;
  /** The simulated model's URL, for `sim:` models on AWS (tests, demos). @default none */
  readonly simulatorUrl?: string;
  /**
   * How long one model call may take, connection to last byte (streamed or not). CallModel's and
   * Compact's Lambda timeout is this plus 15 s, their Tasks' 15 s more; a run's `maxTokensPerTurn`
   * must fit it (lambdas/shared/timing.ts: 60 s fits 2,133 tokens, 10 minutes 21,333). At most
   * 885 s (Lambda's 900 s less the step around the call).
   * @default Duration.seconds(60)
   */
  readonly timeout?: Duration;
}

/** The providers that take an API key (their descriptor has a `secret`): `anthropic`, `openai`. */
export type KeyedProvider = Extract<(typeof MODEL_PROVIDERS.descriptors)[number], { readonly secret: object }>['name'];
/** A value per provider that takes an API key: its secret, or the secret's name or ARN. */
export type ApiKeySecrets<S> = { readonly [P in KeyedProvider]?: S };

/**
 * `apiKeySecrets`' entries, each of a provider that takes an API key: another (a typo such as
 * `antropic`, or `bedrock`) would be ignored, its key never reaching CallModel, so it fails the
 * synth, naming `owner` (`DurableAgent <id>`, `SavepointStack <id>`) and the prop at `prop`.
 */
export function apiKeySecretEntries<S>(owner: string, prop: string, apiKeySecrets: ApiKeySecrets<S> | undefined): [KeyedProvider, unknown][] {
  const keyed = MODEL_PROVIDERS.descriptors.filter((descriptor) => descriptor.secret).map((descriptor) => descriptor.name as string);
  const entries = Object.entries(apiKeySecrets ?? {}) as [string, unknown][];
  for (const [provider] of entries) {
    if (!keyed.includes(provider)) throw new Error(`${owner}: ${prop}.${provider}: not a provider that takes an API key (those are ${keyed.join(', ')})`);
  }
  return entries as [KeyedProvider, unknown][];
}

/** `spec` parsed, or an error naming `owner` (`DurableAgent <id>`, `SavepointStack <id>`), the prop at `prop` and the value. */
export function modelSpecOf(owner: string, prop: string, spec: string): ModelSpec {
  try {
    return parseModelSpec(spec);
  } catch (error) {
    throw new Error(`${owner}: ${prop}: ${(error as Error).message}`);
  }
}

/** The model timeout of `props`, checked at synth time (the error names the agent's construct `id`, the prop and the value). */
export function modelTimeoutOf(id: string, props: ModelAccessProps): Duration {
  const ms = props.timeout?.toMilliseconds() ?? DEFAULT_MODEL_TIMEOUT_MS;
  try {
    checkModelTimeout(ms, 'models.timeout');
  } catch (error) {
    throw new Error(`DurableAgent ${id}: ${(error as Error).message}`);
  }
  return Duration.millis(ms);
}

/** The Lambda timeout of the functions that call the model once (CallModel, Compact). */
export function modelStepTimeoutOf(id: string, props: ModelAccessProps): Duration {
  return Duration.millis(modelStepTimeoutMs(modelTimeoutOf(id, props).toMilliseconds()));
}

/**
 * Grants and binds in one call: CallModel gets read access to the API key secrets and
 * `bedrock:InvokeModel` on the configured Bedrock models only, with the variables naming them;
 * StartRun gets the stack's model. Invalid model specs throw at synth time with the bad value,
 * naming the agent's construct `id` and the prop.
 */
export function bindModelAccess(
  id: string,
  functions: { readonly startRun: LambdaFunction; readonly callModel: LambdaFunction; readonly compact?: LambdaFunction },
  props: ModelAccessProps,
): void {
  // The functions that call the model: CallModel, and Compact (a model call like any other).
  const callers = [functions.callModel, ...(functions.compact ? [functions.compact] : [])];
  const given = [...(props.model === undefined ? [] : [{ prop: 'models.model', spec: props.model }]), ...(props.otherModels ?? []).map((spec, index) => ({ prop: `models.otherModels[${index}]`, spec }))];
  const specs = given.map(({ prop, spec }) => modelSpecOf(`DurableAgent ${id}`, prop, spec));
  apiKeySecretEntries(`DurableAgent ${id}`, 'models.apiKeySecrets', props.apiKeySecrets);
  if (props.model !== undefined) functions.startRun.addEnvironment('MODEL', props.model);
  if (props.simulatorUrl !== undefined) for (const fn of callers) fn.addEnvironment('MODEL_API_URL', props.simulatorUrl);
  for (const fn of callers) fn.addEnvironment(ENV.modelTimeout, String(modelTimeoutOf(id, props).toMilliseconds()));

  // The variable holds the secret's ARN, never its value: CallModel reads the value at run time.
  const secrets = MODEL_PROVIDERS.descriptors.flatMap((descriptor) => {
    const secret = (props.apiKeySecrets as Partial<Record<string, ISecret>> | undefined)?.[descriptor.name];
    return descriptor.secret && secret ? [{ variable: descriptor.secret.variable, secret }] : [];
  });
  for (const fn of callers) {
    for (const { variable, secret } of secrets) {
      secret.grantRead(fn);
      fn.addEnvironment(variable, secret.secretArn);
    }
  }

  // The IAM a provider's calls need (Bedrock: InvokeModel on each model or inference profile).
  for (const descriptor of MODEL_PROVIDERS.descriptors) {
    const grant = descriptor.grant;
    const models = specs.filter((spec) => spec.provider === descriptor.name);
    if (grant === undefined || models.length === 0) continue;
    const { partition, region, account } = Stack.of(functions.callModel);
    const statement = new PolicyStatement({ actions: [...grant.actions], resources: [...new Set(models.flatMap((spec) => grant.resources(spec.model, { partition, region, account })))] });
    const conditional = models.flatMap((spec) => grant.conditional?.(spec.model, { partition }) ?? []).map(({ resources, condition }) => new PolicyStatement({ actions: [...grant.actions], resources, conditions: condition }));
    for (const fn of callers) for (const each of [statement, ...conditional]) fn.addToRolePolicy(each);
  }
}
