import type { ExportResult } from '@opentelemetry/core';
import type { ContentOptions, SpanRecord } from './spans.js';

/** What the environment asks for: `undefined` when tracing is off. */
export interface TracingConfig {
  readonly protocol: 'http/protobuf' | 'http/json';
  readonly serviceName: string;
  readonly content: boolean;
}

/** Where span records go. `export` resolves once the collector answered (or the export failed). */
export interface SpanSink {
  /** Content options the spans are derived with. */
  readonly content: ContentOptions;
  export(spans: readonly SpanRecord[]): Promise<ExportResult>;
  shutdown(): Promise<void>;
}

