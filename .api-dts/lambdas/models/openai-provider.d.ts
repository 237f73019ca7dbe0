import * as z from 'zod';
/** OpenAI Chat Completions through the official SDK (openai.ts; its error table: openai-errors.ts). */
export declare const openaiProvider: import("./provider.js").ProviderDescriptor<"openai", z.ZodObject<{
    apiKey: z.ZodOptional<z.ZodString>;
    baseUrl: z.ZodOptional<z.ZodString>;
    organization: z.ZodOptional<z.ZodString>;
    project: z.ZodOptional<z.ZodString>;
}, z.core.$strict>> & {
    readonly secret: {
        variable: string;
        constructId: string;
    };
};
