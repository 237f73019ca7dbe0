import { SpanKind, SpanStatusCode, TraceFlags, type HrTime } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import type { SpanSink, TracingConfig } from './sink.js';
import type { ContentOptions, SpanRecord } from './spans.js';

/**
 * Export over OTLP with the official OpenTelemetry JS SDK: savepoint's span records become the
 * SDK's `ReadableSpan`s (with the derived ids, which is why no Tracer makes them: a Tracer would
 * mint random ones) and go to the official OTLP/HTTP exporter, JSON or protobuf.
 *
 * Loaded on the first span (config.ts decides whether there is one).
 */

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
        if (result.code !== ExportResultCode.SUCCESS) return { error: result.error ?? new Error(`the export of ${batch.length} spans failed`) };
      }
      return {};
    },
    shutdown: () => exporter.shutdown(),
  };
}

/** The official OTLP/HTTP exporter, as the configuration names it. */
export function otlpSink(config: TracingConfig, redact?: ContentOptions['redact']): SpanSink {
  const options = { url: config.url, headers: { ...config.headers }, timeoutMillis: config.timeoutMs };
  const exporter = config.protocol === 'http/json' ? new OtlpJsonExporter(options) : new OtlpProtoExporter(options);
  // OTEL_RESOURCE_ATTRIBUTES is read by the default resource; the service name set over it.
  const resource = defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }));
  return exporterSink(exporter, resource, { content: config.content, ...(redact && { redact }) });
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
