import * as z from 'zod';
export declare const Price: z.ZodObject<{
    inputPerMTok: z.ZodNumber;
    outputPerMTok: z.ZodNumber;
    cacheWritePerMTok: z.ZodNumber;
    cacheReadPerMTok: z.ZodNumber;
}, z.core.$strict>;
export type Price = z.infer<typeof Price>;
/** A Claude model's price from its input and output prices: Anthropic's multipliers, the same on Bedrock (5-minute writes 1.25×, reads 0.1× of input). */
export declare const claudePrice: (input: number, output: number) => Price;
/** An OpenAI model's price: OpenAI bills no cache writes, so a write costs plain input. */
export declare const openaiPrice: (input: number, cachedInput: number, output: number) => Price;
