import * as z from 'zod';
import type { Measurement } from './metrics.js';
import type { MetricsConfig, SpanSink, TracingConfig } from './sink.js';
import type { ContentOptions } from './spans.js';

/**
 * Whether and where a run's spans go, from the standard OpenTelemetry variables, read once: on
 * when `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (with
 * `OTEL_EXPORTER_OTLP_HEADERS` and `_TIMEOUT`, and their `_TRACES_` forms), off otherwise, and off with
 * `OTEL_SDK_DISABLED=true` or `OTEL_TRACES_EXPORTER=none`. `OTEL_SERVICE_NAME` (default
 * `savepoint`) and `OTEL_RESOURCE_ATTRIBUTES` name the resource. Content (messages, tool arguments
 * and results) only with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, the variable
 * the OpenTelemetry GenAI instrumentations use for the same opt-in.
 *
 * The GenAI metrics are configured the same way (metricsConfigFromEnv).
 *
 * This module is light (zod only): the SDK and the exporter (export.ts) load on the first span, so
 * a function with tracing off pays nothing for them at its cold start.
 */

/**
 * Why an OTLP/HTTP exporter could not post to `endpoint`, or undefined: it takes an absolute http:
 * or https: URL (the OpenTelemetry exporter specification, `OTEL_EXPORTER_OTLP_ENDPOINT`). Checked
 * by savepoint/cdk at synth (the construct's `tracing.endpoint`) and here, where the variables are
 * read, so that a value one takes the other takes too.
 */
export function otlpEndpointProblem(endpoint: string): string | undefined {
  let protocol: string;
  try {
    protocol = new URL(endpoint).protocol;
  } catch {
    protocol = '';
  }
  return protocol === 'http:' || protocol === 'https:' ? undefined : 'is no absolute http(s) URL, which the OTLP/HTTP exporter posts to (e.g. https://otlp.example.com, http://localhost:4318)';
}

const endpointUrl = z.string().superRefine((value, context) => {
  const problem = otlpEndpointProblem(value);
  if (problem) context.addIssue({ code: 'custom', message: `${JSON.stringify(value)} ${problem}` });
});

const flag = z
  .string()
  .optional()
  .transform((value) => value?.trim().toLowerCase() === 'true');

export const TracingEnv = z.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: endpointUrl.optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: endpointUrl.optional(),
  /** The OTLP protocol; `grpc` is not supported (the Lambda ADOT layer's collector accepts HTTP). @default http/protobuf */
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/protobuf', 'http/json']).optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.enum(['http/protobuf', 'http/json']).optional(),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  /** Milliseconds an export may take, its retries included. @default 2000 (the SDK's is 10 s: too long to hold a step up) */
  OTEL_EXPORTER_OTLP_TIMEOUT: z.coerce.number().int().positive().optional(),
  OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: z.coerce.number().int().positive().optional(),
  OTEL_SDK_DISABLED: flag,
  OTEL_TRACES_EXPORTER: z.string().optional(),
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: flag,
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: endpointUrl.optional(),
  OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: z.enum(['http/protobuf', 'http/json']).optional(),
  OTEL_EXPORTER_OTLP_METRICS_HEADERS: z.string().optional(),
  OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: z.coerce.number().int().positive().optional(),
  OTEL_METRICS_EXPORTER: z.string().optional(),
  /** @default delta (see metricsConfigFromEnv) */
  OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: z.enum(['delta', 'cumulative', 'lowmemory']).optional(),
});

/** `key1=value1,key2=value2`, values URL-encoded (the OTLP exporter's format for headers). */
function headersOf(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of (text ?? '').split(',')) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    headers[decodeURIComponent(pair.slice(0, at).trim())] = decodeURIComponent(pair.slice(at + 1).trim());
  }
  return headers;
}

/** An export's bound when no OTEL_EXPORTER_OTLP_TIMEOUT says otherwise: a step waits at most this for its span. */
export const DEFAULT_EXPORT_TIMEOUT_MS = 2_000;

type Env = Readonly<Record<string, string | undefined>>;

function parseEnv(env: Env): Vars {
  // A variable set to nothing is not set (`OTEL_EXPORTER_OTLP_PROTOCOL= savepoint run`).
  const parsed = TracingEnv.safeParse(Object.fromEntries(Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== '')));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${issue.path.join('.')}: ${issue.message}`);
  }
  return parsed.data;
}

type Vars = z.infer<typeof TracingEnv>;

/**
 * One signal's export, by the spec's rules: its own `_TRACES_` / `_METRICS_` variable over the
 * general one; its own endpoint as it is, the base endpoint with the signal's path; off without an
 * endpoint, with `OTEL_SDK_DISABLED=true`, or when `OTEL_<SIGNAL>_EXPORTER` does not name `otlp`.
 */
function signalConfig(vars: Vars, signal: 'traces' | 'metrics') {
  const own =
    signal === 'traces'
      ? { endpoint: vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, headers: vars.OTEL_EXPORTER_OTLP_TRACES_HEADERS, protocol: vars.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, timeout: vars.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT, exporter: vars.OTEL_TRACES_EXPORTER }
      : { endpoint: vars.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, headers: vars.OTEL_EXPORTER_OTLP_METRICS_HEADERS, protocol: vars.OTEL_EXPORTER_OTLP_METRICS_PROTOCOL, timeout: vars.OTEL_EXPORTER_OTLP_METRICS_TIMEOUT, exporter: vars.OTEL_METRICS_EXPORTER };
  const base = vars.OTEL_EXPORTER_OTLP_ENDPOINT;
  const exporters = (own.exporter ?? 'otlp').split(',').map((name) => name.trim());
  if ((!own.endpoint && !base) || vars.OTEL_SDK_DISABLED || !exporters.includes('otlp')) return undefined;
  return {
    url: own.endpoint ?? `${base!.replace(/\/+$/, '')}/v1/${signal}`,
    headers: { ...headersOf(vars.OTEL_EXPORTER_OTLP_HEADERS), ...headersOf(own.headers) },
    protocol: own.protocol ?? vars.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    serviceName: vars.OTEL_SERVICE_NAME ?? 'savepoint',
    timeoutMs: own.timeout ?? vars.OTEL_EXPORTER_OTLP_TIMEOUT ?? DEFAULT_EXPORT_TIMEOUT_MS,
  };
}

/** Reads the standard variables; a malformed one fails here, naming it. */
export function tracingConfigFromEnv(env: Env): TracingConfig | undefined {
  const vars = parseEnv(env);
  const config = signalConfig(vars, 'traces');
  return config && { ...config, content: vars.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT };
}

/**
 * The GenAI metrics (metrics.ts) the standard variables ask for: on when
 * `OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` is set, off with
 * `OTEL_SDK_DISABLED=true` or `OTEL_METRICS_EXPORTER=none`; the `_METRICS_` forms of the protocol,
 * headers and timeout over the general ones, as for traces.
 *
 * Temporality: delta unless `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE` says otherwise (the
 * SDK's default is cumulative). A run's steps are measured by many processes (a Lambda invocation
 * each, a resumed engine): each one's cumulative series would start again from zero, while delta
 * points add up across processes to the run's figures.
 */
export function metricsConfigFromEnv(env: Env): MetricsConfig | undefined {
  const vars = parseEnv(env);
  const config = signalConfig(vars, 'metrics');
  return config && { ...config, temporality: vars.OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE ?? 'delta' };
}

/**
 * The sink the standard variables configure (spans, metrics, or both), or `undefined` when both
 * are off. The exporters load on the first export.
 *
 * @example
 * // OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_EXPORTER_OTLP_PROTOCOL=http/json
 * const sink = sinkFromEnv(process.env);
 * const ledger = sink ? tracingLedger(stored, { sink, clock }) : stored;
 */
export function sinkFromEnv(env: Env, options: { readonly redact?: ContentOptions['redact'] } = {}): SpanSink | undefined {
  const config = tracingConfigFromEnv(env);
  const metrics = metricsConfigFromEnv(env);
  if (!config && !metrics) return undefined;
  let loaded: Promise<SpanSink> | undefined;
  const sink = () => (loaded ??= import('./export.js').then(({ otlpSink }) => otlpSink(config, metrics, options.redact)));
  return {
    content: { content: config?.content ?? false, ...(options.redact && { redact: options.redact }) },
    export: async (spans) => (config ? (await sink()).export(spans) : {}),
    ...(metrics && { measure: async (points: readonly Measurement[]) => (await sink()).measure!(points) }),
    shutdown: async () => {
      if (loaded) await (await loaded).shutdown();
    },
  };
}
