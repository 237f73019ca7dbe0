import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';

/**
 * A model's price: dollars per million tokens in four kinds — plain input, output, cache writes and
 * cache reads (a cached token is billed as one of the two, never also as input). Each provider's
 * descriptor lists its models' list prices; prices.ts assembles them into the versioned table.
 */
/**
 * Dollars per million tokens: at most $10,000, far above any list price (the dearest are a few
 * hundred), so that a typo (1e308) is refused, naming the field, rather than making every run's
 * cost overflow its budget arithmetic.
 */
const perMTok = () => z.number().nonnegative().max(10_000, 'at most 10000 dollars per million tokens');
export const Price = schemaOnFirstUse(() =>
  z.strictObject({
    inputPerMTok: perMTok(),
    outputPerMTok: perMTok(),
    cacheWritePerMTok: perMTok(),
    cacheReadPerMTok: perMTok(),
  }),
);
export type Price = z.infer<ReturnType<typeof Price>>;

/** A Claude model's price from its input and output prices: Anthropic's multipliers, the same on Bedrock (5-minute writes 1.25×, reads 0.1× of input). */
export const claudePrice = (input: number, output: number): Price => ({
  inputPerMTok: input,
  outputPerMTok: output,
  cacheWritePerMTok: round(input * 1.25),
  cacheReadPerMTok: round(input * 0.1),
});

/** An OpenAI model's price: OpenAI bills no cache writes, so a write costs plain input. */
export const openaiPrice = (input: number, cachedInput: number, output: number): Price => ({
  inputPerMTok: input,
  outputPerMTok: output,
  cacheWritePerMTok: input,
  cacheReadPerMTok: cachedInput,
});

function round(value: number): number {
  return Math.round(value * 1e6) / 1e6;
}
