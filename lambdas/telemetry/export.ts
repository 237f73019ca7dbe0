import { SpanKind, SpanStatusCode, TraceFlags, type HrTime } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { z } from 'zod';
import type { ContentOptions, SpanRecord } from './spans.js';

/**
 * Export over OTLP with the official OpenTelemetry JS SDK: savepoint's span records become the
 * SDK's `ReadableSpan`s (with the derived ids, which is why no Tracer makes them: a Tracer would
 * mint random ones) and go to the official OTLP/HTTP exporter, JSON or protobuf.
 *
 * Configured by the standard variables, read once: on when `OTEL_EXPORTER_OTLP_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is set (the exporter itself reads them, and
 * `OTEL_EXPORTER_OTLP_HEADERS` / `_TIMEOUT`), off otherwise, and off with `OTEL_SDK_DISABLED=true` or
 * `OTEL_TRACES_EXPORTER=none`. `OTEL_SERVICE_NAME` (default `savepoint`) and
 * `OTEL_RESOURCE_ATTRIBUTES` name the resource. Content (messages, tool arguments and results)
 * only with `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`, the variable the
 * OpenTelemetry GenAI instrumentations use for the same opt-in.
 */

const flag = z
  .string()
  .optional()
  .transform((value) => value?.trim().toLowerCase() === 'true');

export const TracingEnv = z.object({
  OTEL_EXPORTER_OTLP_ENDPOINT: z.string().url().optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.string().url().optional(),
  /** The OTLP protocol; `grpc` is not supported (the Lambda ADOT layer's collector accepts HTTP). @default http/protobuf */
  OTEL_EXPORTER_OTLP_PROTOCOL: z.enum(['http/protobuf', 'http/json']).optional(),
  OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: z.enum(['http/protobuf', 'http/json']).optional(),
  OTEL_SERVICE_NAME: z.string().min(1).optional(),
  OTEL_SDK_DISABLED: flag,
  OTEL_TRACES_EXPORTER: z.string().optional(),
  OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: flag,
});

/** What the environment asks for: `undefined` when tracing is off. */
export interface TracingConfig {
  readonly protocol: 'http/protobuf' | 'http/json';
  readonly serviceName: string;
  readonly content: boolean;
}

/** Reads the standard variables; a malformed one fails here, naming it. */
export function tracingConfigFromEnv(env: Readonly<Record<string, string | undefined>>): TracingConfig | undefined {
  const parsed = TracingEnv.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new Error(`${issue.path.join('.')}: ${issue.message}`);
  }
  const vars = parsed.data;
  const endpoint = vars.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? vars.OTEL_EXPORTER_OTLP_ENDPOINT;
  const exporters = (vars.OTEL_TRACES_EXPORTER ?? 'otlp').split(',').map((name) => name.trim());
  if (!endpoint || vars.OTEL_SDK_DISABLED || !exporters.includes('otlp')) return undefined;
  return {
    protocol: vars.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? vars.OTEL_EXPORTER_OTLP_PROTOCOL ?? 'http/protobuf',
    serviceName: vars.OTEL_SERVICE_NAME ?? 'savepoint',
    content: vars.OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
  };
}

/** Where span records go. `export` resolves once the collector answered (or the export failed). */
export interface SpanSink {
  /** Content options the spans are derived with. */
  readonly content: ContentOptions;
  export(spans: readonly SpanRecord[]): Promise<ExportResult>;
  shutdown(): Promise<void>;
}

/** The spans of one export request (the SDK's batch processor sends 512 by default). */
const MAX_SPANS_PER_REQUEST = 512;

const SCOPE = { name: 'savepoint', version: '1', schemaUrl: 'https://opentelemetry.io/schemas/1.45.0' };

/**
 * A sink over an SDK `SpanExporter` (the OTLP exporter from the environment, or any other: the
 * SDK's own in-memory one in tests). Each call is one export request, made as the span ends.
 */
export function exporterSink(exporter: SpanExporter, resource: Resource, content: ContentOptions = {}): SpanSink {
  return {
    content,
    async export(spans) {
      // A long run's trace after the fact goes in requests of a bounded size.
      for (let start = 0; start < spans.length; start += MAX_SPANS_PER_REQUEST) {
        const batch = spans.slice(start, start + MAX_SPANS_PER_REQUEST).map((span) => readableSpan(span, resource));
        const result = await new Promise<ExportResult>((resolve) => exporter.export(batch, resolve));
        if (result.code !== ExportResultCode.SUCCESS) return result;
      }
      return { code: ExportResultCode.SUCCESS };
    },
    shutdown: () => exporter.shutdown(),
  };
}

/** The sink the standard variables configure, or `undefined` when tracing is off. */
export function sinkFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  options: { readonly redact?: ContentOptions['redact'] } = {},
): SpanSink | undefined {
  const config = tracingConfigFromEnv(env);
  if (!config) return undefined;
  const exporter = config.protocol === 'http/json' ? new OtlpJsonExporter() : new OtlpProtoExporter();
  // OTEL_RESOURCE_ATTRIBUTES is read by the default resource; the service name set over it.
  const resource = defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }));
  return exporterSink(exporter, resource, { content: config.content, ...(options.redact && { redact: options.redact }) });
}

const hr = (ms: number): HrTime => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];

/** One span record as the SDK's `ReadableSpan`, ended, with its derived ids. */
export function readableSpan(span: SpanRecord, resource: Resource): ReadableSpan {
  const context = { traceId: span.traceId, spanId: span.spanId, traceFlags: TraceFlags.SAMPLED };
  return {
    name: span.name,
    kind: span.kind === 'client' ? SpanKind.CLIENT : SpanKind.INTERNAL,
    spanContext: () => context,
    ...(span.parentSpanId && { parentSpanContext: { traceId: span.traceId, spanId: span.parentSpanId, traceFlags: TraceFlags.SAMPLED } }),
    startTime: hr(span.startMs),
    endTime: hr(span.endMs),
    duration: hr(span.endMs - span.startMs),
    status: span.status === 'error' ? { code: SpanStatusCode.ERROR, ...(span.statusMessage && { message: span.statusMessage }) } : { code: SpanStatusCode.UNSET },
    attributes: span.attributes as ReadableSpan['attributes'],
    links: span.links.map((link) => ({
      context: { traceId: link.traceId, spanId: link.spanId, traceFlags: TraceFlags.SAMPLED },
      attributes: link.attributes as ReadableSpan['attributes'],
    })),
    events: [],
    ended: true,
    resource,
    instrumentationScope: SCOPE,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}
