import * as z from 'zod';
import type { Usage } from '../records/messages.js';
import { Price } from './price.js';
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
export declare const DEFAULT_PRICE_TABLE: PriceTable;
/** Overrides by model spec, e.g. from configuration: `{ "openai:gpt-5": { … } }`. */
export declare const PriceOverrides: z.ZodRecord<z.ZodString, z.ZodObject<{
    inputPerMTok: z.ZodNumber;
    outputPerMTok: z.ZodNumber;
    cacheWritePerMTok: z.ZodNumber;
    cacheReadPerMTok: z.ZodNumber;
}, z.core.$strict>>;
export type PriceOverrides = z.infer<typeof PriceOverrides>;
/**
 * The default table with `overrides` applied (validated, specs normalized). The version gains a
 * digest of the overrides: `2026-11-01+3f2a9c1e`.
 */
export declare function priceTable(overrides?: unknown, base?: PriceTable): PriceTable;
/**
 * The table a deployment prices an agent's runs with: the built-in table, the agent's own prices
 * (`defineAgent({ prices })`) over it, and the deployment's (`savepoint run --prices`, the
 * construct's `prices`) over both. Undefined when neither sets any: the built-in table.
 */
export declare function deploymentPrices(agentPrices?: unknown, deployment?: unknown): PriceTable | undefined;
/**
 * The price of a model, or an error naming it: a model without a price is refused at start, so
 * that a dollar budget can never silently read zero.
 */
export declare function priceFor(spec: string, table?: PriceTable): Price;
/** Dollars of one call. Input, cache writes and cache reads are disjoint counts (see Usage). */
export declare function costOf(spec: string, usage: Usage, table?: PriceTable): number;
