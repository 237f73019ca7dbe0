import { SpanKind, SpanStatusCode, TraceFlags, type HrTime } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter as OtlpJsonExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { OTLPTraceExporter as OtlpProtoExporter } from '@opentelemetry/exporter-trace-otlp-proto';
import { AggregationTemporalityPreference, OTLPMetricExporter as OtlpJsonMetricExporter } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as OtlpProtoMetricExporter } from '@opentelemetry/exporter-metrics-otlp-proto';
import { MeterProvider, PeriodicExportingMetricReader, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { defaultResource, resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { BUCKETS, OPERATION_DURATION, TOKEN_USAGE, type Measurement } from './metrics.js';
import type { MetricsConfig, SpanSink, TracingConfig } from './sink.js';
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

/** The official OTLP/HTTP exporters, as the configuration names them: spans, metrics, or both. */
export function otlpSink(config: TracingConfig | undefined, metrics?: MetricsConfig, redact?: ContentOptions['redact']): SpanSink {
  const spans = config ? exporterSink(otlpSpanExporter(config), resourceNamed(config.serviceName), { content: config.content, ...(redact && { redact }) }) : undefined;
  const meter = metrics ? metricSink(otlpMetricExporter(metrics), resourceNamed(metrics.serviceName), metrics.timeoutMs) : undefined;
  return {
    content: spans?.content ?? {},
    export: async (records) => (spans ? spans.export(records) : {}),
    ...(meter && { measure: meter.measure }),
    shutdown: async () => {
      await Promise.all([spans?.shutdown(), meter?.shutdown()]);
    },
  };
}

function otlpSpanExporter(config: TracingConfig): SpanExporter {
  const options = { url: config.url, headers: { ...config.headers }, timeoutMillis: config.timeoutMs };
  return config.protocol === 'http/json' ? new OtlpJsonExporter(options) : new OtlpProtoExporter(options);
}

const TEMPORALITY = { delta: AggregationTemporalityPreference.DELTA, cumulative: AggregationTemporalityPreference.CUMULATIVE, lowmemory: AggregationTemporalityPreference.LOWMEMORY } as const;

function otlpMetricExporter(config: MetricsConfig): PushMetricExporter {
  const options = { url: config.url, headers: { ...config.headers }, timeoutMillis: config.timeoutMs, temporalityPreference: TEMPORALITY[config.temporality] };
  return config.protocol === 'http/json' ? new OtlpJsonMetricExporter(options) : new OtlpProtoMetricExporter(options);
}

// OTEL_RESOURCE_ATTRIBUTES is read by the default resource; the service name set over it.
const resourceNamed = (serviceName: string) => defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }));

/**
 * The GenAI histograms (metrics.ts) on the SDK's MeterProvider, over any `PushMetricExporter`.
 * Each `measure` records its points and flushes them at once, as a span is exported as it ends: a
 * Lambda may be frozen as soon as the step returns, so nothing waits for the reader's period (an
 * hour here: the flush is what sends).
 */
export function metricSink(exporter: PushMetricExporter, resource: Resource, timeoutMs: number): Required<Pick<SpanSink, 'measure' | 'shutdown'>> {
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000, exportTimeoutMillis: timeoutMs });
  const provider = new MeterProvider({ resource, readers: [reader] });
  const meter = provider.getMeter(SCOPE.name, SCOPE.version, { schemaUrl: SCOPE.schemaUrl });
  const histograms = {
    [TOKEN_USAGE]: meter.createHistogram(TOKEN_USAGE, { unit: '{token}', description: 'Number of input and output tokens used.', advice: { explicitBucketBoundaries: [...BUCKETS[TOKEN_USAGE]] } }),
    [OPERATION_DURATION]: meter.createHistogram(OPERATION_DURATION, { unit: 's', description: 'GenAI operation duration.', advice: { explicitBucketBoundaries: [...BUCKETS[OPERATION_DURATION]] } }),
  };
  return {
    async measure(points) {
      for (const point of points) histograms[point.metric].record(point.value, point.attributes);
      try {
        await reader.forceFlush();
        return {};
      } catch (error) {
        return { error: error instanceof Error ? error : new Error(String(error)) };
      }
    },
    shutdown: () => provider.shutdown(),
  };
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
