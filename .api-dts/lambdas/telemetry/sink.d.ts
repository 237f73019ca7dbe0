import type { Measurement } from './metrics.js';
import type { ContentOptions, SpanRecord } from './spans.js';
/** What the environment asks for: `undefined` when tracing is off. */
export interface TracingConfig {
    /** Where the spans are posted (`…/v1/traces`). */
    readonly url: string;
    readonly headers: Readonly<Record<string, string>>;
    readonly protocol: 'http/protobuf' | 'http/json';
    readonly serviceName: string;
    /** Milliseconds one export may take, retries included. */
    readonly timeoutMs: number;
    readonly content: boolean;
}
/** Where the GenAI metrics go (config.ts `metricsConfigFromEnv`). */
export interface MetricsConfig extends Omit<TracingConfig, 'content'> {
    /** Where the points are posted (`…/v1/metrics`). */
    readonly url: string;
    readonly temporality: 'delta' | 'cumulative' | 'lowmemory';
}
/** Where span records go. `export` resolves once the collector answered, with `error` when the export failed. */
export interface SpanSink {
    /** Content options the spans are derived with. */
    readonly content: ContentOptions;
    export(spans: readonly SpanRecord[]): Promise<{
        error?: Error;
    }>;
    /** Records the measurements (metrics.ts) and exports them before it resolves; absent when metrics are off. */
    measure?(points: readonly Measurement[]): Promise<{
        error?: Error;
    }>;
    shutdown(): Promise<void>;
}
