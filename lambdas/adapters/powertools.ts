import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { Tracer } from '@aws-lambda-powertools/tracer';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import type middy from '@middy/core';
import { METRICS_NAMESPACE, type MetricUnit as OurUnit } from '../shared/metrics.js';
import type { Telemetry } from './middleware.js';

const UNITS: Record<OurUnit, (typeof MetricUnit)[keyof typeof MetricUnit]> = { Count: MetricUnit.Count, Seconds: MetricUnit.Seconds, None: MetricUnit.NoUnit };

/**
 * Powertools for AWS Lambda behind the middleware's `Telemetry`: Logger (JSON lines with the
 * appended run keys; `POWERTOOLS_LOG_LEVEL`, INFO by default), Metrics (EMF in namespace
 * `Savepoint`, dimension `service` = the agent), Tracer (X-Ray: the handler, the AWS SDK clients
 * passed to `traced`, and outbound `fetch` — the model and the agent's tools — as subsegments).
 * One instance per container.
 */
export function powertools(serviceName: string) {
  const logger = new Logger({ serviceName });
  const metrics = new Metrics({ namespace: METRICS_NAMESPACE, serviceName });
  const tracer = new Tracer({ serviceName, captureHTTPsRequests: true });
  let stored = 0;
  const telemetry: Telemetry = {
    resetKeys: () => logger.resetKeys(),
    appendKeys: (keys) => logger.appendKeys(keys),
    info: (message, attributes = {}) => logger.info(message, attributes),
    error: (message, attributes = {}) => logger.error(message, attributes),
    addMetrics: (points) => {
      for (const point of points) metrics.addMetric(point.name, UNITS[point.unit], point.value);
      stored += points.length;
    },
    flush: () => {
      if (stored > 0) metrics.publishStoredMetrics();
      stored = 0;
    },
  };
  return {
    telemetry,
    /** The handler's X-Ray subsegment; its response (ids and counts only) as metadata. */
    tracing: captureLambdaHandler(tracer) as middy.MiddlewareObj,
    /** An AWS SDK v3 client whose calls become subsegments. */
    traced: <T>(client: T): T => tracer.captureAWSv3Client(client),
  };
}
