import { createHash } from 'node:crypto';
import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { InvalidInputError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Usage } from '../records/messages.js';
import { Price } from './price.js';
import { MODEL_PROVIDERS } from './providers.js';
import { formatModelSpec, parseModelSpec } from './spec.js';

/**
 * Dollars per million tokens by `provider:model-id`, in four kinds (price.ts). The
 * table is versioned: a run records the version it was priced with, and an override changes the
 * version, so a run priced differently never looks priced the same.
 *
 * List prices of the providers' pricing pages, each in its descriptor (providers.ts). Check them
 * before trusting a bill; override what differs for an account (batch, regional premiums, discounts).
 */
export { Price } from './price.js';

export interface PriceTable {
  readonly version: string;
  readonly models: Readonly<Record<string, Price>>;
}

/** Every provider's list prices (their descriptors, providers.ts), under one version. */
export const DEFAULT_PRICE_TABLE: PriceTable = {
  version: '2026-11-01',
  models: MODEL_PROVIDERS.prices(),
};

/** Overrides by model spec, e.g. from configuration: `{ "openai:gpt-5": { … } }`. */
export const PriceOverrides = schemaOnFirstUse(() => z.record(z.string(), Price()));
export type PriceOverrides = z.infer<ReturnType<typeof PriceOverrides>>;

/**
 * The default table with `overrides` applied (validated, specs normalized). The version gains a
 * digest of the overrides: `2026-11-01+3f2a9c1e`.
 */
export function priceTable(overrides: unknown = {}, base: PriceTable = DEFAULT_PRICE_TABLE): PriceTable {
  const parsed = parseOrThrow(PriceOverrides(), overrides, 'price overrides');
  const entries = Object.entries(parsed).map(([spec, price]) => [formatModelSpec(parseModelSpec(spec)), price] as const);
  if (entries.length === 0) return base;
  const digest = createHash('sha256').update(JSON.stringify(entries.sort(([a], [b]) => a.localeCompare(b)))).digest('hex').slice(0, 8);
  return { version: `${base.version}+${digest}`, models: { ...base.models, ...Object.fromEntries(entries) } };
}

/**
 * The table a deployment prices an agent's runs with: the built-in table, the agent's own prices
 * (`defineAgent({ prices })`) over it, and the deployment's (`savepoint run --prices`, the
 * construct's `prices`) over both. Undefined when neither sets any: the built-in table.
 */
export function deploymentPrices(agentPrices?: unknown, deployment?: unknown): PriceTable | undefined {
  if (agentPrices === undefined && deployment === undefined) return undefined;
  const own = agentPrices === undefined ? DEFAULT_PRICE_TABLE : priceTable(agentPrices);
  return deployment === undefined ? own : priceTable(deployment, own);
}

/**
 * The price of a model, or an error naming it: a model without a price is refused at start, so
 * that a dollar budget can never silently read zero.
 */
export function priceFor(spec: string, table: PriceTable = DEFAULT_PRICE_TABLE): Price {
  const key = formatModelSpec(parseModelSpec(spec));
  const price = Object.hasOwn(table.models, key) ? table.models[key] : undefined;
  if (price === undefined) {
    throw new InvalidInputError(
      `model ${key} has no price in price table ${table.version}: add its price to the agent (defineAgent({ prices: { '${key}': { inputPerMTok, outputPerMTok, cacheWritePerMTok, cacheReadPerMTok } } }), dollars per million tokens) or choose a priced model`,
    );
  }
  return price;
}

/** Dollars of one call. Input, cache writes and cache reads are disjoint counts (see Usage). */
export function costOf(spec: string, usage: Usage, table: PriceTable = DEFAULT_PRICE_TABLE): number {
  const price = priceFor(spec, table);
  return (
    (usage.input_tokens * price.inputPerMTok +
      (usage.cache_creation_input_tokens ?? 0) * price.cacheWritePerMTok +
      (usage.cache_read_input_tokens ?? 0) * price.cacheReadPerMTok +
      usage.output_tokens * price.outputPerMTok) /
    1_000_000
  );
}

