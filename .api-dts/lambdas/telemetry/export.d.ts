import { type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { type Resource } from '@opentelemetry/resources';
import type { ReadableSpan, SpanExporter } from '@opentelemetry/sdk-trace-base';
import type { MetricsConfig, SpanSink, TracingConfig } from './sink.js';
import type { ContentOptions, SpanRecord } from './spans.js';
/**
 * A sink over an SDK `SpanExporter` (the OTLP exporter from the environment, or any other: the
 * SDK's own in-memory one in tests). Each call is one export request, made as the span ends.
 */
export declare function exporterSink(exporter: SpanExporter, resource: Resource, content?: ContentOptions): SpanSink;
/** The official OTLP/HTTP exporters, as the configuration names them: spans, metrics, or both. */
export declare function otlpSink(config: TracingConfig | undefined, metrics?: MetricsConfig, redact?: ContentOptions['redact']): SpanSink;
/**
 * The GenAI histograms (metrics.ts) on the SDK's MeterProvider, over any `PushMetricExporter`.
 * Each `measure` records its points and flushes them at once, as a span is exported as it ends: a
 * Lambda may be frozen as soon as the step returns, so nothing waits for the reader's period (an
 * hour here: the flush is what sends).
 */
export declare function metricSink(exporter: PushMetricExporter, resource: Resource, timeoutMs: number): Required<Pick<SpanSink, 'measure' | 'shutdown'>>;
/** One span record as the SDK's `ReadableSpan`, ended, with its derived ids. */
export declare function readableSpan(span: SpanRecord, resource: Resource): ReadableSpan;
