import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local OTLP/HTTP receiver: what a collector's `otlphttp` receiver does at `/v1/traces` and
 * `/v1/metrics`, for the tests. JSON requests are decoded by the OTLP/JSON mapping of the official
 * `opentelemetry-proto` definitions (ids as hex, 64-bit integers as strings or numbers, values as
 * `AnyValue`); protobuf requests are kept as bytes.
 */

export type Value = string | number | boolean | Value[] | undefined;

export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** SPAN_KIND_INTERNAL = 1, SPAN_KIND_CLIENT = 3. */
  kind: number;
  startNanos: bigint;
  endNanos: bigint;
  attributes: Record<string, Value>;
  links: { traceId: string; spanId: string; attributes: Record<string, Value> }[];
  status: { code?: number; message?: string };
  resource: Record<string, Value>;
  scope: string;
}

/** One histogram data point, as an OTLP/JSON metrics request carries it. */
export interface ReceivedPoint {
  metric: string;
  unit: string;
  /** AGGREGATION_TEMPORALITY_DELTA = 1, _CUMULATIVE = 2. */
  temporality: number;
  attributes: Record<string, Value>;
  count: number;
  sum: number;
  bucketCounts: number[];
  explicitBounds: number[];
  resource: Record<string, Value>;
  scope: string;
}

export interface Receiver {
  readonly url: string;
  readonly spans: ReceivedSpan[];
  /** The histogram points of every JSON request to `/v1/metrics`. */
  readonly points: ReceivedPoint[];
  /** Each request's headers and content type, in order. */
  readonly requests: { url: string; headers: IncomingHttpHeaders; contentType: string; body: Buffer }[];
  clear(): void;
  close(): Promise<void>;
}

interface AnyValue {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string | number;
  endTimeUnixNano: string | number;
  attributes?: KeyValue[];
  links?: { traceId: string; spanId: string; attributes?: KeyValue[] }[];
  status?: { code?: number; message?: string };
}
interface ExportTraceServiceRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { scope?: { name?: string }; spans?: OtlpSpan[] }[] }[];
}

const valueOf = (value: AnyValue): Value => {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
};
const attributesOf = (list: KeyValue[] | undefined) => Object.fromEntries((list ?? []).map((entry) => [entry.key, valueOf(entry.value)]));

export function decodeTraceRequest(request: ExportTraceServiceRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) =>
    (resourceSpans.scopeSpans ?? []).flatMap((scopeSpans) =>
      (scopeSpans.spans ?? []).map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        ...(span.parentSpanId && { parentSpanId: span.parentSpanId }),
        name: span.name,
        kind: span.kind,
        startNanos: BigInt(span.startTimeUnixNano),
        endNanos: BigInt(span.endTimeUnixNano),
        attributes: attributesOf(span.attributes),
        links: (span.links ?? []).map((link) => ({ traceId: link.traceId, spanId: link.spanId, attributes: attributesOf(link.attributes) })),
        status: span.status ?? {},
        resource: attributesOf(resourceSpans.resource?.attributes),
        scope: scopeSpans.scope?.name ?? '',
      })),
    ),
  );
}

interface ExportMetricsServiceRequest {
  resourceMetrics?: {
    resource?: { attributes?: KeyValue[] };
    scopeMetrics?: {
      scope?: { name?: string };
      metrics?: {
        name: string;
        unit?: string;
        histogram?: {
          aggregationTemporality?: number;
          dataPoints?: { attributes?: KeyValue[]; count?: string | number; sum?: number; bucketCounts?: (string | number)[]; explicitBounds?: number[] }[];
        };
      }[];
    }[];
  }[];
}

export function decodeMetricsRequest(request: ExportMetricsServiceRequest): ReceivedPoint[] {
  return (request.resourceMetrics ?? []).flatMap((resourceMetrics) =>
    (resourceMetrics.scopeMetrics ?? []).flatMap((scopeMetrics) =>
      (scopeMetrics.metrics ?? []).flatMap((metric) =>
        (metric.histogram?.dataPoints ?? []).map((point) => ({
          metric: metric.name,
          unit: metric.unit ?? '',
          temporality: metric.histogram?.aggregationTemporality ?? 0,
          attributes: attributesOf(point.attributes),
          count: Number(point.count ?? 0),
          sum: point.sum ?? 0,
          bucketCounts: (point.bucketCounts ?? []).map(Number),
          explicitBounds: point.explicitBounds ?? [],
          resource: attributesOf(resourceMetrics.resource?.attributes),
          scope: scopeMetrics.scope?.name ?? '',
        })),
      ),
    ),
  );
}

export async function startOtlpReceiver(): Promise<Receiver> {
  const spans: ReceivedSpan[] = [];
  const points: ReceivedPoint[] = [];
  const requests: Receiver['requests'] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const contentType = request.headers['content-type'] ?? '';
      requests.push({ url: request.url ?? '', headers: request.headers, contentType, body });
      if (request.method !== 'POST' || (request.url !== '/v1/traces' && request.url !== '/v1/metrics')) {
        response.writeHead(404).end();
        return;
      }
      if (contentType.startsWith('application/json')) {
        const decoded: unknown = JSON.parse(body.toString('utf8'));
        if (request.url === '/v1/traces') spans.push(...decodeTraceRequest(decoded as ExportTraceServiceRequest));
        else points.push(...decodeMetricsRequest(decoded as ExportMetricsServiceRequest));
      }
      response.writeHead(200, { 'content-type': contentType.startsWith('application/json') ? 'application/json' : 'application/x-protobuf' }).end(contentType.startsWith('application/json') ? '{}' : '');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    points,
    requests,
    clear: () => {
      spans.length = 0;
      points.length = 0;
      requests.length = 0;
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
