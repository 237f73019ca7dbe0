/**
 * The built-in model providers, one descriptor each (provider.ts). A new provider is its descriptor
 * file, its client file and its line here; the order is the order messages list them in.
 */
export declare const MODEL_PROVIDERS: import("./provider-table.js").ProviderTable<readonly [import("./provider.js").ProviderDescriptor<"sim", import("zod").ZodObject<{
    baseUrl: import("zod").ZodString;
    apiKey: import("zod").ZodString;
    promptCaching: import("zod").ZodOptional<import("zod").ZodBoolean>;
    fetch: import("zod").ZodOptional<import("zod").ZodCustom<typeof fetch, typeof fetch>>;
}, import("zod/v4/core").$strict>> & {
    readonly secret: undefined;
}, import("./provider.js").ProviderDescriptor<"anthropic", import("zod").ZodObject<{
    apiKey: import("zod").ZodOptional<import("zod").ZodString>;
    baseUrl: import("zod").ZodOptional<import("zod").ZodString>;
}, import("zod/v4/core").$strict>> & {
    readonly secret: {
        variable: string;
        constructId: string;
    };
}, import("./provider.js").ProviderDescriptor<"bedrock", import("zod").ZodObject<{
    region: import("zod").ZodOptional<import("zod").ZodString>;
    endpoint: import("zod").ZodOptional<import("zod").ZodString>;
    credentials: import("zod").ZodOptional<import("zod").ZodObject<{
        accessKeyId: import("zod").ZodString;
        secretAccessKey: import("zod").ZodString;
        sessionToken: import("zod").ZodOptional<import("zod").ZodString>;
    }, import("zod/v4/core").$strict>>;
    promptCaching: import("zod").ZodOptional<import("zod").ZodBoolean>;
}, import("zod/v4/core").$strict>> & {
    readonly secret: undefined;
}, import("./provider.js").ProviderDescriptor<"openai", import("zod").ZodObject<{
    apiKey: import("zod").ZodOptional<import("zod").ZodString>;
    baseUrl: import("zod").ZodOptional<import("zod").ZodString>;
    organization: import("zod").ZodOptional<import("zod").ZodString>;
    project: import("zod").ZodOptional<import("zod").ZodString>;
}, import("zod/v4/core").$strict>> & {
    readonly secret: {
        variable: string;
        constructId: string;
    };
}]>;
