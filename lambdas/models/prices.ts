import { createHash } from 'node:crypto';
import * as z from 'zod';
import { InvalidInputError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import type { Usage } from '../records/messages.js';
import { formatModelSpec, parseModelSpec } from './spec.js';

/**
 * Dollars per million tokens by `provider:model-id`, in four kinds: plain input, output, cache
 * writes and cache reads (a cached token is billed as one of the two, never also as input). The
 * table is versioned: a run records the version it was priced with, and an override changes the
 * version, so a run priced differently never looks priced the same.
 *
 * List prices of the providers' pricing pages (Anthropic: platform.claude.com/docs/en/about-claude/pricing,
 * 5-minute cache writes; OpenAI: openai.com/api/pricing, which bills no cache writes, so a write
 * costs plain input; Bedrock: aws.amazon.com/bedrock/pricing, on-demand, us-east-1). Check them
 * before trusting a bill; override what differs for an account (batch, regional premiums, discounts).
 */
export const Price = z.strictObject({
  inputPerMTok: z.number().nonnegative(),
  outputPerMTok: z.number().nonnegative(),
  cacheWritePerMTok: z.number().nonnegative(),
  cacheReadPerMTok: z.number().nonnegative(),
});
export type Price = z.infer<typeof Price>;

export interface PriceTable {
  readonly version: string;
  readonly models: Readonly<Record<string, Price>>;
}

const claude = (input: number, output: number): Price => ({
  inputPerMTok: input,
  outputPerMTok: output,
  // Anthropic's multipliers, the same on Bedrock: 5-minute writes 1.25×, reads 0.1× of input.
  cacheWritePerMTok: round(input * 1.25),
  cacheReadPerMTok: round(input * 0.1),
});
const openai = (input: number, cachedInput: number, output: number): Price => ({
  inputPerMTok: input,
  outputPerMTok: output,
  cacheWritePerMTok: input,
  cacheReadPerMTok: cachedInput,
});

export const DEFAULT_PRICE_TABLE: PriceTable = {
  version: '2026-11-01',
  models: {
    // The simulator bills like a Sonnet-class model, so that budgets behave realistically.
    'sim:savepoint-sim-1': claude(3, 15),

    'anthropic:claude-opus-4-5': claude(5, 25),
    'anthropic:claude-opus-4-5-20251101': claude(5, 25),
    'anthropic:claude-sonnet-4-6': claude(3, 15),
    'anthropic:claude-sonnet-4-5': claude(3, 15),
    'anthropic:claude-sonnet-4-5-20250929': claude(3, 15),
    'anthropic:claude-haiku-4-5': claude(1, 5),
    'anthropic:claude-haiku-4-5-20251001': claude(1, 5),

    'bedrock:global.anthropic.claude-sonnet-4-5-20250929-v1:0': claude(3, 15),
    'bedrock:us.anthropic.claude-sonnet-4-5-20250929-v1:0': claude(3, 15),
    'bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0': claude(1, 5),
    // Nova: reads at a quarter of input, writes not billed apart.
    'bedrock:amazon.nova-pro-v1:0': { inputPerMTok: 0.8, outputPerMTok: 3.2, cacheWritePerMTok: 0.8, cacheReadPerMTok: 0.2 },
    'bedrock:us.amazon.nova-pro-v1:0': { inputPerMTok: 0.8, outputPerMTok: 3.2, cacheWritePerMTok: 0.8, cacheReadPerMTok: 0.2 },
    'bedrock:us.amazon.nova-lite-v1:0': { inputPerMTok: 0.06, outputPerMTok: 0.24, cacheWritePerMTok: 0.06, cacheReadPerMTok: 0.015 },

    'openai:gpt-5': openai(1.25, 0.125, 10),
    'openai:gpt-5-mini': openai(0.25, 0.025, 2),
    'openai:gpt-4.1': openai(2, 0.5, 8),
    'openai:gpt-4.1-mini': openai(0.4, 0.1, 1.6),
    'openai:gpt-4o-mini': openai(0.15, 0.075, 0.6),
  },
};

/** Overrides by model spec, e.g. from configuration: `{ "openai:gpt-5": { … } }`. */
export const PriceOverrides = z.record(z.string(), Price);
export type PriceOverrides = z.infer<typeof PriceOverrides>;

/**
 * The default table with `overrides` applied (validated, specs normalized). The version gains a
 * digest of the overrides: `2026-11-01+3f2a9c1e`.
 */
export function priceTable(overrides: unknown = {}, base: PriceTable = DEFAULT_PRICE_TABLE): PriceTable {
  const parsed = parseOrThrow(PriceOverrides, overrides, 'price overrides');
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

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
