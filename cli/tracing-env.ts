import { UsageError } from './errors.js';

/**
 * The OpenTelemetry variables (OTEL_EXPORTER_OTLP_*, lambdas/telemetry/config.ts) a command exports
 * by, checked before it makes or opens anything: a bad one is the user's setting, named, exit 2 —
 * not a failure of the engine half-started. (On AWS the construct sets them: a bad one there is
 * the deployment's fault, left as it is.)
 */
export async function checkTracingEnv(env: Readonly<Record<string, string | undefined>> = process.env): Promise<void> {
  const { tracingConfigFromEnv } = await import('../lambdas/telemetry/config.js');
  try {
    tracingConfigFromEnv(env);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}
