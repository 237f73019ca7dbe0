import * as z from 'zod';
import { InvalidInputError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { checkMaxTokensFit, DEFAULT_MODEL_TIMEOUT_MS, MAX_MODEL_TIMEOUT_MS } from '../shared/timing.js';
import type { MessageRequest, MessageResponse, ModelClient } from '../records/messages.js';
import { checkEndpoint } from './endpoint.js';
import type { Price } from './price.js';
import type { ProviderDescriptor } from './provider.js';

/**
 * The model providers as a table of descriptors (provider.ts): the one place that answers, for any
 * provider, how a spec is parsed, what its configuration is, which variables and secrets fill it,
 * what its models cost, its OpenTelemetry name and how its client is built. Nothing else switches
 * on a provider's name. providers.ts holds the built-in table; a test may build its own.
 */

type AnyDescriptor = ProviderDescriptor<string, z.ZodType>;

/** A model chosen by configuration: `provider:model-id`. */
export interface ModelSpec<N extends string = string> {
  readonly provider: N;
  /** The provider's own model id, sent on the wire as is. */
  readonly model: string;
}

type ConfigShape<D extends readonly AnyDescriptor[]> = {
  /** Budget of one model call, connection to last byte (lambdas/shared/timing.ts). @default 60_000 */
  timeoutMs: z.ZodOptional<z.ZodNumber>;
} & { [P in D[number] as P['name']]: z.ZodOptional<ReturnType<P['config']>> };

export interface ProviderTable<D extends readonly AnyDescriptor[] = readonly AnyDescriptor[]> {
  readonly descriptors: D;
  /** The providers' names, in the table's order (the order error messages list them in). */
  readonly names: readonly D[number]['name'][];
  /** Where and how to reach each provider: every part optional, checked by `create` for the chosen one. */
  readonly config: () => z.ZodObject<ConfigShape<D>, z.core.$strict>;
  /** The environment variables the providers read locally, in the table's order. */
  readonly env: readonly string[];
  descriptor(name: string): D[number] | undefined;
  /** A spec's provider and model id, or an `Agent.InvalidInput` error naming it. */
  parse(spec: string): ModelSpec<D[number]['name']>;
  /** Every provider's list prices, by `provider:model-id`. */
  prices(): Record<string, Price>;
  /** The client of one model, bound to it (see `boundTo`). */
  create(spec: string | ModelSpec, config: unknown): ModelClient;
}

export function formatModelSpec(spec: ModelSpec): string {
  return `${spec.provider}:${spec.model}`;
}

export function providerTable<const D extends readonly AnyDescriptor[]>(descriptors: D): ProviderTable<D> {
  const names = descriptors.map((descriptor) => descriptor.name);
  const byName = new Map(descriptors.map((descriptor) => [descriptor.name, descriptor]));
  if (byName.size !== descriptors.length) throw new Error(`provider table: a name is given twice (${names.join(', ')})`);
  const config = schemaOnFirstUse(
    () =>
      z.strictObject({
        timeoutMs: z.number().int().min(1_000).max(MAX_MODEL_TIMEOUT_MS).optional(),
        ...Object.fromEntries(descriptors.map((descriptor) => [descriptor.name, descriptor.config().optional()])),
      }) as unknown as ReturnType<ProviderTable<D>['config']>,
  );

  const parse = (spec: string): ModelSpec<D[number]['name']> => {
    const colon = spec.indexOf(':');
    const provider = colon < 0 ? '' : spec.slice(0, colon);
    const model = colon < 0 ? '' : spec.slice(colon + 1);
    if (colon < 0 || model.trim() === '' || model !== model.trim()) {
      throw new InvalidInputError(
        `invalid model spec ${JSON.stringify(spec)}: expected "provider:model-id" with provider one of ${names.join(', ')} (e.g. "anthropic:claude-sonnet-4-6")`,
      );
    }
    if (!byName.has(provider)) {
      throw new InvalidInputError(`invalid model spec ${JSON.stringify(spec)}: unknown provider ${JSON.stringify(provider)}; expected one of ${names.join(', ')}`);
    }
    return { provider, model };
  };

  return {
    descriptors,
    names,
    config,
    env: descriptors.flatMap((descriptor) => descriptor.env),
    descriptor: (name) => byName.get(name),
    parse,
    prices: () => Object.fromEntries(descriptors.flatMap((descriptor) => Object.entries(descriptor.prices).map(([model, price]) => [`${descriptor.name}:${model}`, price]))),
    create(spec, raw) {
      const model = typeof spec === 'string' ? parse(spec) : spec;
      const checked = parseOrThrow(config(), raw, 'model configuration') as Record<string, unknown> & { timeoutMs?: number };
      const descriptor = byName.get(model.provider);
      // A spec object naming a provider of another table: refused as its string would be.
      if (descriptor === undefined) return parse(formatModelSpec(model)) as never;
      const name = formatModelSpec(model);
      const client = descriptor.create(checked[descriptor.name], {
        spec: name,
        timeoutMs: checked.timeoutMs,
        missing: (what, variable, onAws) => {
          throw new InvalidInputError(`model ${name} needs ${what}: set ${variable} (locally) or ${onAws} (on AWS)`);
        },
        endpoint: checkEndpoint,
      });
      return boundTo(model, checked.timeoutMs ?? DEFAULT_MODEL_TIMEOUT_MS, client);
    },
  };
}

/**
 * The client for one configured model: the request's `model` must name it — its provider id, or
 * the full spec — so that a ledger recorded for one model is never silently sent to another; and
 * its `max_tokens` (the run's `maxTokensPerTurn`) must fit the model timeout, or the call would be
 * cut off every time (lambdas/shared/timing.ts).
 */
function boundTo(spec: ModelSpec, timeoutMs: number, client: ModelClient): ModelClient {
  const full = formatModelSpec(spec);
  return {
    createMessage(request: MessageRequest, signal?: AbortSignal): Promise<MessageResponse> {
      if (request.model !== spec.model && request.model !== full) {
        return Promise.reject(new InvalidInputError(`request names model ${request.model}, but this client is configured for ${full}`));
      }
      try {
        checkMaxTokensFit(request.max_tokens, timeoutMs, 'maxTokensPerTurn (max_tokens)');
      } catch (error) {
        return Promise.reject(error);
      }
      return client.createMessage({ ...request, model: spec.model }, signal);
    },
  };
}
