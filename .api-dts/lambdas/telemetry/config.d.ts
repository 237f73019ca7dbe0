import * as z from 'zod';
import type { MetricsConfig, SpanSink, TracingConfig } from './sink.js';
import type { ContentOptions } from './spans.js';
export declare const TracingEnv: z.ZodObject<{
    OTEL_EXPORTER_OTLP_ENDPOINT: z.ZodOptional<z.ZodString>;
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.ZodOptional<z.ZodString>;
    OTEL_EXPORTER_OTLP_PROTOCOL: z.ZodOptional<z.ZodEnum<{
        "http/json": "http/json";
        "http/protobuf": "http/protobuf";
    }>>;
    OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.ZodOptional<z.ZodEnum<{
        "http/json": "http/json";
        "http/protobuf": "http/protobuf";
    }>>;
    OTEL_EXPORTER_OTLP_HEADERS: z.ZodOptional<z.ZodString>;
    OTEL_EXPORTER_OTLP_TRACES_HEADERS: z.ZodOptional<z.ZodString>;
    OTEL_SERVICE_NAME: z.ZodOptional<z.ZodString>;
    OTEL_EXPORTER_OTLP_TIMEOUT: z.ZodOptional<z.ZodCoercedNumber<unknown>>;
    OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: z.ZodOptional<z.ZodCoercedNumber<unknown>>;
    OTEL_SDK_DISABLED: z.ZodPipe<z.ZodOptional<z.ZodString>, z.ZodTransform<boolean, string | undefined>>;
    OTEL_TRACES_EXPORTER: z.ZodOptional<z.ZodString>;
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: z.ZodPipe<z.ZodOptional<z.ZodString>, z.ZodTransform<boolean, string | undefined>>;
    OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: z.ZodOptional<z.ZodString>;
    OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: z.ZodOptional<z.ZodEnum<{
        "http/json": "http/json";
        "http/protobuf": "http/protobuf";
    }>>;
    OTEL_EXPORTER_OTLP_METRICS_HEADERS: z.ZodOptional<z.ZodString>;
    OTEL_EXPORTER_OTLP_METRICS_TIMEOUT: z.ZodOptional<z.ZodCoercedNumber<unknown>>;
    OTEL_METRICS_EXPORTER: z.ZodOptional<z.ZodString>;
    OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE: z.ZodOptional<z.ZodEnum<{
        cumulative: "cumulative";
        delta: "delta";
        lowmemory: "lowmemory";
    }>>;
}, z.core.$strip>;
/** An export's bound when no OTEL_EXPORTER_OTLP_TIMEOUT says otherwise: a step waits at most this for its span. */
export declare const DEFAULT_EXPORT_TIMEOUT_MS = 2000;
type Env = Readonly<Record<string, string | undefined>>;
/** Reads the standard variables; a malformed one fails here, naming it. */
export declare function tracingConfigFromEnv(env: Env): TracingConfig | undefined;
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
export declare function metricsConfigFromEnv(env: Env): MetricsConfig | undefined;
/**
 * The sink the standard variables configure (spans, metrics, or both), or `undefined` when both
 * are off. The exporters load on the first export.
 *
 * @example
 * // OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 OTEL_EXPORTER_OTLP_PROTOCOL=http/json
 * const sink = sinkFromEnv(process.env);
 * const ledger = sink ? tracingLedger(stored, { sink, clock }) : stored;
 */
export declare function sinkFromEnv(env: Env, options?: {
    readonly redact?: ContentOptions['redact'];
}): SpanSink | undefined;
export {};
