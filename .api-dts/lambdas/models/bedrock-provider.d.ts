import * as z from 'zod';
/** Amazon Bedrock's Converse API through the AWS SDK, authorized by IAM: no key (bedrock.ts; its error table: bedrock-errors.ts). */
export declare const bedrockProvider: import("./provider.js").ProviderDescriptor<"bedrock", z.ZodObject<{
    region: z.ZodOptional<z.ZodString>;
    endpoint: z.ZodOptional<z.ZodString>;
    credentials: z.ZodOptional<z.ZodObject<{
        accessKeyId: z.ZodString;
        secretAccessKey: z.ZodString;
        sessionToken: z.ZodOptional<z.ZodString>;
    }, z.core.$strict>>;
    promptCaching: z.ZodOptional<z.ZodBoolean>;
}, z.core.$strict>> & {
    readonly secret: undefined;
};
