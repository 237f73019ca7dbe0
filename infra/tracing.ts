import { Token } from 'aws-cdk-lib';
import type { ILayerVersion } from 'aws-cdk-lib/aws-lambda';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { otlpEndpointProblem } from '../lambdas/telemetry/config.js';

/**
 * OpenTelemetry GenAI traces and metrics from the deployed functions (lambdas/telemetry/): each
 * function that writes a turn, a tool call, a decision or a run's end exports its span (and a turn's
 * or call's metrics) over OTLP/HTTP before it returns. Two ways to a backend:
 *
 *   in-function export   endpoint: 'https://otlp.example.com'    the official exporter posts to it
 *   a collector layer    collectorLayer: <the ADOT collector     spans go to the layer's collector on
 *                        layer of your region>                    localhost:4318; its config forwards them
 *                                                                 (e.g. to X-Ray's OTLP endpoint, SigV4-signed)
 *
 * @example
 * tracing: { collectorLayer: LayerVersion.fromLayerVersionArn(this, 'Adot', adotCollectorArn), collectorConfigUri: '/var/task/collector.yaml' }
 */
export interface GenAiTracing {
  /**
   * The OTLP/HTTP endpoint the functions export to (`OTEL_EXPORTER_OTLP_ENDPOINT`): the collector's
   * base URL, to which each signal's path (`/v1/traces`, `/v1/metrics`) is added.
   * @default 'http://localhost:4318' with `collectorLayer` (the layer's collector); required without
   */
  readonly endpoint?: string;
  /** A Lambda layer running an OpenTelemetry collector beside each function. @default none */
  readonly collectorLayer?: ILayerVersion;
  /** The layer collector's configuration (`OPENTELEMETRY_COLLECTOR_CONFIG_URI`). @default the layer's own */
  readonly collectorConfigUri?: string;
  /** `OTEL_EXPORTER_OTLP_PROTOCOL`. @default 'http/protobuf' */
  readonly protocol?: 'http/protobuf' | 'http/json';
  /**
   * Export message and tool argument/result content (`OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`),
   * through the agent's `redactTrace`. @default false
   */
  readonly content?: boolean;
  /**
   * Also export the GenAI metrics (`gen_ai.client.token.usage`, `gen_ai.client.operation.duration`)
   * to the same endpoint (`/v1/metrics`); `false` sets `OTEL_METRICS_EXPORTER=none`, e.g. for a
   * collector with no metrics pipeline. @default true
   */
  readonly metrics?: boolean;
}

/** The standard variables the functions read; throws naming the prop when the combination is invalid. */
export function tracingEnvironment(id: string, agentName: string, tracing: GenAiTracing | undefined): Record<string, string> {
  if (!tracing) return {};
  const endpoint = tracing.endpoint ?? (tracing.collectorLayer ? 'http://localhost:4318' : undefined);
  if (!endpoint) throw new Error(`DurableAgent ${id}: tracing needs an endpoint or a collectorLayer`);
  // Said here, naming the prop: the functions would say it at their cold start, in a log. (A token,
  // e.g. an imported value, is known at deploy time only: their cold start checks what it became.)
  const problem = !Token.isUnresolved(endpoint) && otlpEndpointProblem(endpoint);
  if (problem) throw new Error(`DurableAgent ${id}: tracing.endpoint ${JSON.stringify(endpoint)} ${problem}`);
  // A base URL (OTEL_EXPORTER_OTLP_ENDPOINT): each signal's path is added to it, so one that already
  // ends in a signal's path would be posted to `…/v1/traces/v1/traces`, its spans lost without a word.
  const signalPath = /\/v1\/(traces|metrics|logs)\/?$/.exec(endpoint);
  if (signalPath) throw new Error(`DurableAgent ${id}: tracing.endpoint is the collector's base URL, to which each signal's path (/v1/traces, /v1/metrics) is added: drop ${signalPath[0]} from ${JSON.stringify(endpoint)}`);
  if (tracing.collectorConfigUri && !tracing.collectorLayer) throw new Error(`DurableAgent ${id}: tracing.collectorConfigUri needs a collectorLayer`);
  return {
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: tracing.protocol ?? 'http/protobuf',
    OTEL_SERVICE_NAME: agentName,
    ...(tracing.content && { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: 'true' }),
    ...(tracing.metrics === false && { OTEL_METRICS_EXPORTER: 'none' }),
    ...(tracing.collectorConfigUri && { OPENTELEMETRY_COLLECTOR_CONFIG_URI: tracing.collectorConfigUri }),
  };
}

/** Adds the collector layer to every Lambda function under `scope`. */
export function addCollectorLayer(scope: Construct, tracing: GenAiTracing | undefined): void {
  if (!tracing?.collectorLayer) return;
  for (const child of scope.node.findAll()) if (child instanceof LambdaFunction) child.addLayers(tracing.collectorLayer);
}
