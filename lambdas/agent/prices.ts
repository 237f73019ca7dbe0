import type { Usage } from './messages.js';

/**
 * Dollars per million tokens, by model. The table is versioned: a run records the version it was
 * priced with, and the version is part of the run's fingerprint.
 */
export const PRICE_TABLE = {
  version: '2026-11-01',
  models: {
    'savepoint-sim-1': { inputPerMTok: 3, outputPerMTok: 15, cachedInputPerMTok: 0.3 },
  },
} as const;

export type PricedModel = keyof typeof PRICE_TABLE.models;

export function isPricedModel(model: string): model is PricedModel {
  return Object.hasOwn(PRICE_TABLE.models, model);
}

/** Cost of one call in dollars. Cached input tokens are priced apart from the rest of the input. */
export function costOf(model: PricedModel, usage: Usage): number {
  const price = PRICE_TABLE.models[model];
  const cached = usage.cache_read_input_tokens ?? 0;
  return (
    (usage.input_tokens * price.inputPerMTok + cached * price.cachedInputPerMTok + usage.output_tokens * price.outputPerMTok) /
    1_000_000
  );
}
