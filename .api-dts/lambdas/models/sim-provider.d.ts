import * as z from 'zod';
/**
 * The savepoint simulator (sim/): the Anthropic Messages wire format over plain HTTP, no SDK. Its
 * client is small and loaded with the table; on AWS the stack serves its URL as a parameter.
 */
export declare const simProvider: import("./provider.js").ProviderDescriptor<"sim", z.ZodObject<{
    baseUrl: z.ZodString;
    apiKey: z.ZodString;
    promptCaching: z.ZodOptional<z.ZodBoolean>;
    fetch: z.ZodOptional<z.ZodCustom<typeof fetch, typeof fetch>>;
}, z.core.$strict>> & {
    readonly secret: undefined;
};
