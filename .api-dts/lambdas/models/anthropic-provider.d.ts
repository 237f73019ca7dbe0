import * as z from 'zod';
/** Anthropic's Messages API through the official SDK (anthropic.ts; its error table: anthropic-errors.ts). */
export declare const anthropicProvider: import("./provider.js").ProviderDescriptor<"anthropic", z.ZodObject<{
    apiKey: z.ZodOptional<z.ZodString>;
    baseUrl: z.ZodOptional<z.ZodString>;
}, z.core.$strict>> & {
    readonly secret: {
        variable: string;
        constructId: string;
    };
};
