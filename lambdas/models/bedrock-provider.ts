import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';
import { claudePrice } from './price.js';
import { defineProvider, lazyClient } from './provider.js';

/** Cross-region inference profiles are named by a geography prefix (`us.`, `eu.`, `global.`, …). */
const INFERENCE_PROFILE = /^(us|eu|apac|jp|au|ca|us-gov|global)\.(.+)$/;
/** An application inference profile (one an account made, e.g. to tag costs): known by its ARN only. */
const APPLICATION_PROFILE = /^arn:[^:]+:bedrock:[^:]*:\d*:application-inference-profile\/.+$/;

/** The provider's part of the configuration (its descriptor's `config`). */
const bedrockConfig = schemaOnFirstUse(() =>
  z.strictObject({
    region: z.string().min(1).optional(),
    endpoint: z.string().min(1).optional(),
    /** Static credentials (tests, local runs); absent, the SDK's chain (the Lambda role). */
    credentials: z.strictObject({ accessKeyId: z.string().min(1), secretAccessKey: z.string().min(1), sessionToken: z.string().min(1).optional() }).optional(),
    /** @default true */
    promptCaching: z.boolean().optional(),
  }),
);

/** Amazon Bedrock's Converse API through the AWS SDK, authorized by IAM: no key (bedrock.ts; its error table: bedrock-errors.ts). */
export const bedrockProvider = defineProvider({
  name: 'bedrock',
  otelName: 'aws.bedrock',
  config: bedrockConfig,
  env: ['AWS_REGION', 'BEDROCK_ENDPOINT'],
  fromEnv: (variable) => ({ region: variable('AWS_REGION'), endpoint: variable('BEDROCK_ENDPOINT') }),
  // aws.amazon.com/bedrock/pricing, on-demand, us-east-1.
  prices: {
    'global.anthropic.claude-sonnet-4-5-20250929-v1:0': claudePrice(3, 15),
    'us.anthropic.claude-sonnet-4-5-20250929-v1:0': claudePrice(3, 15),
    'us.anthropic.claude-haiku-4-5-20251001-v1:0': claudePrice(1, 5),
    // Nova: reads at a quarter of input, writes not billed apart.
    'amazon.nova-pro-v1:0': { inputPerMTok: 0.8, outputPerMTok: 3.2, cacheWritePerMTok: 0.8, cacheReadPerMTok: 0.2 },
    'us.amazon.nova-pro-v1:0': { inputPerMTok: 0.8, outputPerMTok: 3.2, cacheWritePerMTok: 0.8, cacheReadPerMTok: 0.2 },
    'us.amazon.nova-lite-v1:0': { inputPerMTok: 0.06, outputPerMTok: 0.24, cacheWritePerMTok: 0.06, cacheReadPerMTok: 0.015 },
  },
  grant: {
    // Converse is authorized as InvokeModel, on the model (or inference profile) it names.
    actions: ['bedrock:InvokeModel'],
    /**
     * A foundation model in the stack's region; or an inference profile and the foundation model it
     * routes to, in whichever region the profile sends the call.
     */
    resources(id, { partition, region, account }) {
      if (id.startsWith('arn:')) return [id];
      const profile = INFERENCE_PROFILE.exec(id);
      if (!profile) return [`arn:${partition}:bedrock:${region}::foundation-model/${id}`];
      return [`arn:${partition}:bedrock:${region}:${account}:inference-profile/${id}`, `arn:${partition}:bedrock:*::foundation-model/${profile[2]}`];
    },
    /**
     * An application inference profile routes to foundation models the template cannot name (they
     * are the profile's, set where it was made): InvokeModel on every foundation model, but only
     * through this profile (`bedrock:InferenceProfileArn`, as "Prerequisites for inference
     * profiles" shows: https://docs.aws.amazon.com/bedrock/latest/userguide/inference-profiles-prereq.html).
     */
    conditional(id, { partition }) {
      if (!APPLICATION_PROFILE.test(id)) return [];
      return [{ resources: [`arn:${partition}:bedrock:*::foundation-model/*`], condition: { StringEquals: { 'bedrock:InferenceProfileArn': id } } }];
    },
  },
  create(config, { timeoutMs, missing, endpoint: checked }) {
    const region = config?.region ?? missing('an AWS region', 'AWS_REGION', 'the Lambda’s region');
    const endpoint = config?.endpoint === undefined ? undefined : checked(config.endpoint, 'BEDROCK_ENDPOINT (bedrock.endpoint)');
    return lazyClient(async () => new (await import('./bedrock.js')).BedrockModelClient({ region, endpoint, credentials: config?.credentials, promptCaching: config?.promptCaching, timeoutMs }));
  },
});
