import { Duration, Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { ENV } from '../lambdas/models/config.js';
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
  readonly apiKeySecrets?: { readonly anthropic?: ISecret; readonly openai?: ISecret };
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

/** The model timeout of `props`, checked at synth time (the error names the prop and the value). */
export function modelTimeoutOf(props: ModelAccessProps): Duration {
  const ms = props.timeout?.toMilliseconds() ?? DEFAULT_MODEL_TIMEOUT_MS;
  try {
    checkModelTimeout(ms, 'models.timeout');
  } catch (error) {
    throw new Error(`model access: ${(error as Error).message}`);
  }
  return Duration.millis(ms);
}

/** The Lambda timeout of the functions that call the model once (CallModel, Compact). */
export function modelStepTimeoutOf(props: ModelAccessProps): Duration {
  return Duration.millis(modelStepTimeoutMs(modelTimeoutOf(props).toMilliseconds()));
}

/**
 * Grants and binds in one call: CallModel gets read access to the API key secrets and
 * `bedrock:InvokeModel` on the configured Bedrock models only, with the variables naming them;
 * StartRun gets the stack's model. Invalid model specs throw at synth time with the bad value.
 */
export function bindModelAccess(
  functions: { readonly startRun: LambdaFunction; readonly callModel: LambdaFunction; readonly compact?: LambdaFunction },
  props: ModelAccessProps,
): void {
  // The functions that call the model: CallModel, and Compact (a model call like any other).
  const callers = [functions.callModel, ...(functions.compact ? [functions.compact] : [])];
  const specs = [...(props.model === undefined ? [] : [props.model]), ...(props.otherModels ?? [])].map((spec) => {
    try {
      return parseModelSpec(spec);
    } catch (error) {
      throw new Error(`model access: ${(error as Error).message}`);
    }
  });
  if (props.model !== undefined) functions.startRun.addEnvironment('MODEL', props.model);
  if (props.simulatorUrl !== undefined) for (const fn of callers) fn.addEnvironment('MODEL_API_URL', props.simulatorUrl);
  for (const fn of callers) fn.addEnvironment(ENV.modelTimeout, String(modelTimeoutOf(props).toMilliseconds()));

  const { anthropic, openai } = props.apiKeySecrets ?? {};
  // The variable holds the secret's ARN, never its value: CallModel reads the value at run time.
  for (const fn of callers) {
    if (anthropic) {
      anthropic.grantRead(fn);
      fn.addEnvironment('ANTHROPIC_API_KEY_SECRET_ARN', anthropic.secretArn);
    }
    if (openai) {
      openai.grantRead(fn);
      fn.addEnvironment('OPENAI_API_KEY_SECRET_ARN', openai.secretArn);
    }
  }

  const bedrock = specs.filter((spec) => spec.provider === 'bedrock');
  if (bedrock.length > 0) {
    // Converse is authorized as InvokeModel, on the model (or inference profile) it names.
    const grant = new PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: [...new Set(bedrock.flatMap((spec) => bedrockModelArns(Stack.of(functions.callModel), spec)))] });
    for (const fn of callers) fn.addToRolePolicy(grant);
  }
}

/** Cross-region inference profiles are named by a geography prefix (`us.`, `eu.`, `global.`, …). */
const INFERENCE_PROFILE = /^(us|eu|apac|jp|au|ca|us-gov|global)\.(.+)$/;

/**
 * The ARNs a Converse call on `spec` is authorized against: a foundation model in the stack's
 * region; or an inference profile and the foundation model it routes to, in whichever region the
 * profile sends the call.
 */
export function bedrockModelArns(stack: Stack, spec: ModelSpec): string[] {
  const id = spec.model;
  if (id.startsWith('arn:')) return [id];
  const { partition, region, account } = stack;
  const profile = INFERENCE_PROFILE.exec(id);
  if (!profile) return [`arn:${partition}:bedrock:${region}::foundation-model/${id}`];
  return [`arn:${partition}:bedrock:${region}:${account}:inference-profile/${id}`, `arn:${partition}:bedrock:*::foundation-model/${profile[2]}`];
}
