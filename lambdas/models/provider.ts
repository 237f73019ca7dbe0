import type * as z from 'zod';
import type { ModelClient } from '../records/messages.js';
import type { Price } from './price.js';

/**
 * A model provider as one record: everything the harness knows of it, read by the spec parser,
 * the configuration (locally from environment variables, on AWS with the API key from Secrets
 * Manager), the price table, telemetry and the construct. A new provider is its descriptor, its
 * client (the module `create` loads) and a line in providers.ts — nothing else names it.
 *
 * A descriptor loads no SDK: every Lambda bundle reads the table (a spec is parsed everywhere), so
 * `create` reaches its client through a dynamic import, a chunk loaded on the first call.
 */
export interface ProviderDescriptor<N extends string = string, C extends z.ZodType = z.ZodType> {
  /** The prefix of a model spec: `openai` in `openai:gpt-5`. */
  readonly name: N;
  /** OpenTelemetry's `gen_ai.provider.name` (the registry's well-known value where one exists). */
  readonly otelName: string;
  /**
   * The provider's part of `ModelConfig`, under its `name`: strict, so a typo is refused. A
   * function that makes the schema on first use (shared/on-first-use.ts): every process that
   * reads the table builds none it does not parse.
   */
  readonly config: () => C;
  /** The environment variables `fromEnv` reads locally (blank counts as unset). */
  readonly env: readonly string[];
  /** The provider's part of the configuration from those variables; undefined leaves it unset. */
  fromEnv(variable: (name: string) => string | undefined): z.input<C> | undefined;
  /** Where its API key comes from on AWS; absent, it needs no key (Bedrock: the function's role). */
  readonly secret?: ProviderSecret;
  /** List prices by the provider's model id (prices.ts puts them in the versioned table). */
  readonly prices: Readonly<Record<string, Price>>;
  /** IAM actions CallModel needs on each model it may call (infra/model-access.ts). @default none */
  readonly grant?: ProviderGrant;
  /** The client of one model, from the provider's checked part of the configuration. */
  create(config: z.output<C> | undefined, context: ProviderContext): ModelClient;
}

/** An API key read from a Secrets Manager secret (its string is the key) into the config's `apiKey`. */
export interface ProviderSecret {
  /** The Lambda variable holding the secret's ARN, set by the construct on the functions that call the model. */
  readonly variable: string;
  /** The construct id the stack imports the secret under: a renamed id is a replaced resource. */
  readonly constructId: string;
}

export interface ProviderGrant {
  readonly actions: readonly string[];
  /** The resources a call to `model` is authorized against, in the stack's partition, region and account. */
  resources(model: string, where: { readonly partition: string; readonly region: string; readonly account: string }): string[];
  /**
   * Resources a call to `model` reaches only under a condition (each its own statement): a model
   * known at synth only by what routes to it, e.g. the foundation models behind a Bedrock
   * application inference profile, allowed only through that profile. @default none
   */
  conditional?(model: string, where: { readonly partition: string }): { readonly resources: string[]; readonly condition: Record<string, Record<string, string>> }[];
}

/** What `create` is given besides its configuration. */
export interface ProviderContext {
  /** The model's spec (`provider:model-id`), for messages. */
  readonly spec: string;
  /** The model call's budget, connection to last byte, when configured (lambdas/shared/timing.ts). */
  readonly timeoutMs: number | undefined;
  /** Refuses the model: it needs `what`, set by `variable` (locally) or `onAws` (on AWS). */
  missing(what: string, variable: string, onAws: string): never;
  /** `url` if it may carry a key or a conversation (endpoint.ts); `setting` names its source. */
  endpoint(url: string, setting: string): string;
}

/**
 * A descriptor, its name kept literal (the configuration's type names each provider's part) and
 * whether it has a secret (the construct's `apiKeySecrets` names only the providers that do).
 */
export function defineProvider<const N extends string, C extends z.ZodType, S extends ProviderSecret | undefined = undefined>(
  descriptor: ProviderDescriptor<N, C> & { readonly secret?: S },
): ProviderDescriptor<N, C> & { readonly secret: S } {
  return descriptor as ProviderDescriptor<N, C> & { readonly secret: S };
}

/**
 * A client whose SDK is loaded on its first call: a process (or a Lambda function) that never
 * calls a provider never pays for loading its SDK. The configuration was checked already.
 */
export function lazyClient(load: () => Promise<ModelClient>): ModelClient {
  let client: Promise<ModelClient> | undefined;
  return {
    createMessage(request, signal) {
      client ??= load();
      return client.then((loaded) => loaded.createMessage(request, signal));
    },
  };
}
