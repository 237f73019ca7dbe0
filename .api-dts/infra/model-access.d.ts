import { Duration } from 'aws-cdk-lib';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import { MODEL_PROVIDERS } from '../lambdas/models/providers.js';
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
export type KeyedProvider = Extract<(typeof MODEL_PROVIDERS.descriptors)[number], {
    readonly secret: object;
}>['name'];
/** A value per provider that takes an API key: its secret, or the secret's name or ARN. */
export type ApiKeySecrets<S> = {
    readonly [P in KeyedProvider]?: S;
};
/** The model timeout of `props`, checked at synth time (the error names the prop and the value). */
export declare function modelTimeoutOf(props: ModelAccessProps): Duration;
/** The Lambda timeout of the functions that call the model once (CallModel, Compact). */
export declare function modelStepTimeoutOf(props: ModelAccessProps): Duration;
/**
 * Grants and binds in one call: CallModel gets read access to the API key secrets and
 * `bedrock:InvokeModel` on the configured Bedrock models only, with the variables naming them;
 * StartRun gets the stack's model. Invalid model specs throw at synth time with the bad value.
 */
export declare function bindModelAccess(functions: {
    readonly startRun: LambdaFunction;
    readonly callModel: LambdaFunction;
    readonly compact?: LambdaFunction;
}, props: ModelAccessProps): void;
