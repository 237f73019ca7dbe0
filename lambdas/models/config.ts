import * as z from 'zod';
import { InvalidInputError } from '../shared/errors.js';
import { parseOrThrow } from '../shared/validation.js';
import { checkModelTimeout, MAX_MODEL_TIMEOUT_MS } from '../shared/timing.js';

/**
 * Where and how to reach each provider. Locally it comes from environment variables
 * (`modelConfigFromEnv`); on AWS the caller fills in the API keys from Secrets Manager. Every field
 * is optional here: `createModelClient` checks that the chosen provider's part is present and names
 * the missing setting.
 */
export const ModelConfig = z.strictObject({
  /** Budget of one model call, connection to last byte (lambdas/shared/timing.ts). @default 60_000 */
  timeoutMs: z.number().int().min(1_000).max(MAX_MODEL_TIMEOUT_MS).optional(),
  sim: z
    .strictObject({
      baseUrl: z.string().min(1),
      apiKey: z.string().min(1),
      /** @default true */
      promptCaching: z.boolean().optional(),
      /** The client's fetch: the local engine reaches the simulator in process (sim/in-process.ts). @default globalThis.fetch */
      fetch: z.custom<typeof fetch>((value) => typeof value === 'function', 'must be a fetch function').optional(),
    })
    .optional(),
  anthropic: z.strictObject({ apiKey: z.string().min(1).optional(), baseUrl: z.string().min(1).optional() }).optional(),
  openai: z
    .strictObject({
      apiKey: z.string().min(1).optional(),
      baseUrl: z.string().min(1).optional(),
      organization: z.string().min(1).optional(),
      project: z.string().min(1).optional(),
    })
    .optional(),
  bedrock: z
    .strictObject({
      region: z.string().min(1).optional(),
      endpoint: z.string().min(1).optional(),
      /** Static credentials (tests, local runs); absent, the SDK's chain (the Lambda role). */
      credentials: z.strictObject({ accessKeyId: z.string().min(1), secretAccessKey: z.string().min(1), sessionToken: z.string().min(1).optional() }).optional(),
      /** @default true */
      promptCaching: z.boolean().optional(),
    })
    .optional(),
});
export type ModelConfig = z.infer<typeof ModelConfig>;

/** The environment variables read locally, by the config field they fill. */
export const ENV = {
  simUrl: 'MODEL_API_URL',
  simKey: 'MODEL_API_KEY',
  anthropicKey: 'ANTHROPIC_API_KEY',
  anthropicUrl: 'ANTHROPIC_BASE_URL',
  openaiKey: 'OPENAI_API_KEY',
  openaiUrl: 'OPENAI_BASE_URL',
  region: 'AWS_REGION',
  bedrockEndpoint: 'BEDROCK_ENDPOINT',
  /** Set by the construct on the model-calling functions (its `models.timeout`). */
  modelTimeout: 'MODEL_TIMEOUT_MS',
} as const;

const Env = z.object(Object.fromEntries(Object.values(ENV).map((name) => [name, z.string().min(1).optional()])));

/** The local configuration, from environment variables (blank counts as unset). */
export function modelConfigFromEnv(env: Record<string, string | undefined> = process.env): ModelConfig {
  const set = Object.fromEntries(Object.values(ENV).flatMap((name) => (env[name]?.trim() ? [[name, env[name]?.trim()]] : [])));
  const vars = parseOrThrow(Env, set, 'environment');
  const pick = (name: string): string | undefined => vars[name];
  const simUrl = pick(ENV.simUrl);
  const timeout = pick(ENV.modelTimeout);
  return parseOrThrow(
    ModelConfig,
    {
      ...(timeout === undefined ? {} : { timeoutMs: checkModelTimeout(Number(timeout), ENV.modelTimeout) }),
      ...(simUrl === undefined ? {} : { sim: { baseUrl: simUrl, apiKey: pick(ENV.simKey) ?? 'local' } }),
      anthropic: { apiKey: pick(ENV.anthropicKey), baseUrl: pick(ENV.anthropicUrl) },
      openai: { apiKey: pick(ENV.openaiKey), baseUrl: pick(ENV.openaiUrl) },
      bedrock: { region: pick(ENV.region), endpoint: pick(ENV.bedrockEndpoint) },
    },
    'model configuration',
  );
}

/**
 * `url` if it may carry a key or a conversation: `https://`, or `http://` on loopback only (the
 * local wire servers). `setting` names where the value came from, for the message.
 */
export function checkEndpoint(url: string, setting: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInputError(`${setting}=${url} is not a URL`);
  }
  if (parsed.protocol === 'https:') return url;
  if (parsed.protocol === 'http:' && isLoopback(parsed.hostname)) return url;
  if (parsed.protocol === 'http:') {
    throw new InvalidInputError(`${setting}=${url} is refused: http:// is allowed only on loopback (127.0.0.1, ::1, localhost) — use https://`);
  }
  throw new InvalidInputError(`${setting}=${url} is refused: the scheme must be https:// (or http:// on loopback)`);
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
