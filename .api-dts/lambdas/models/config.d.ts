import type * as z from 'zod';
export { checkEndpoint } from './endpoint.js';
/**
 * Where and how to reach each provider: the model timeout, and each provider's part under its name
 * (its descriptor's `config`). Locally it comes from environment variables (`modelConfigFromEnv`);
 * on AWS the caller fills in the API keys from Secrets Manager. Every part is optional here:
 * `createModelClient` checks that the chosen provider's part is present and names the missing setting.
 */
export declare const ModelConfig: z.ZodObject<{
    timeoutMs: z.ZodOptional<z.ZodNumber>;
} & {
    anthropic: z.ZodOptional<z.ZodObject<{
        apiKey: z.ZodOptional<z.ZodString>;
        baseUrl: z.ZodOptional<z.ZodString>;
    }, z.core.$strict>>;
    bedrock: z.ZodOptional<z.ZodObject<{
        region: z.ZodOptional<z.ZodString>;
        endpoint: z.ZodOptional<z.ZodString>;
        credentials: z.ZodOptional<z.ZodObject<{
            accessKeyId: z.ZodString;
            secretAccessKey: z.ZodString;
            sessionToken: z.ZodOptional<z.ZodString>;
        }, z.core.$strict>>;
        promptCaching: z.ZodOptional<z.ZodBoolean>;
    }, z.core.$strict>>;
    openai: z.ZodOptional<z.ZodObject<{
        apiKey: z.ZodOptional<z.ZodString>;
        baseUrl: z.ZodOptional<z.ZodString>;
        organization: z.ZodOptional<z.ZodString>;
        project: z.ZodOptional<z.ZodString>;
    }, z.core.$strict>>;
    sim: z.ZodOptional<z.ZodObject<{
        baseUrl: z.ZodString;
        apiKey: z.ZodString;
        promptCaching: z.ZodOptional<z.ZodBoolean>;
        fetch: z.ZodOptional<z.ZodCustom<typeof fetch, typeof fetch>>;
    }, z.core.$strict>>;
}, z.core.$strict>;
export type ModelConfig = z.infer<typeof ModelConfig>;
/** The environment variables read locally besides the providers' own (their descriptors' `env`). */
export declare const ENV: {
    /** Set by the construct on the model-calling functions (its `models.timeout`). */
    readonly modelTimeout: 'MODEL_TIMEOUT_MS';
};
/** The local configuration, from environment variables (blank counts as unset). */
export declare function modelConfigFromEnv(env?: Record<string, string | undefined>): ModelConfig;
