import type { Command } from 'commander';
import { checkTracingEnv } from '../tracing-env.js';
import { err, out, printJson } from '../program.js';
import { agentFor, noRunError, withClient } from '../target.js';

/**
 * `savepoint trace <runId>`: the run's whole trace rebuilt from its sealed ledger records and
 * exported to the OTLP endpoint the standard variables name: the same span ids and attributes
 * the live export sent (lambdas/telemetry/spans.ts), so a run that crashed, or ran before tracing
 * was configured, gets its complete trace. With no endpoint configured, the tree is printed.
 */
export function registerTraceCommand(program: Command): void {
  program
    .command('trace <runId>')
    .description("a run's OpenTelemetry GenAI trace, rebuilt from the ledger: exported to $OTEL_EXPORTER_OTLP_ENDPOINT, or printed")
    .option('--agent <name|path>', "the run's agent, for its tools' guarantees and its redaction hook (default: the agent named in the run)")
    .option('--print', 'print the span tree (also when exporting)', false)
    .option('--json', 'print the spans as JSON', false)
    .action((runId: string, options: { print: boolean; json: boolean; agent?: string }) =>
      checkTracingEnv().then(() => withClient('trace', undefined, undefined, async ({ ledger, parts }) => {
        const run = await ledger.getRun(runId);
        if (!run) throw await noRunError(runId, { ledger, parts });
        // The run's agent, when it is here: its tools' guarantees and its redaction hook.
        const agent = await agentFor(options.agent, run.agent, null);
        // Spans only: the metrics were measured as the run went, and a second send would count twice.
        const [{ sinkFromEnv, tracingConfigFromEnv }, { traceOf }, { formatSpanTree }] = await Promise.all([import('../../lambdas/telemetry/config.js'), import('../../lambdas/telemetry/spans.js'), import('../../lambdas/telemetry/tree.js')]);
        const sink = tracingConfigFromEnv(process.env) ? sinkFromEnv({ ...process.env, OTEL_METRICS_EXPORTER: 'none' }, { ...(agent?.redactTrace && { redact: agent.redactTrace }) }) : undefined;
        const spans = traceOf({ run, ...(await ledger.listConversation(runId)) }, { ...sink?.content, ...(agent && { tools: agent.tools }) });
        if (options.json) printJson({ runId, spans });
        else if (options.print || !sink) out(formatSpanTree(spans));
        if (!sink) {
          if (!options.json && !options.print) err('savepoint: no OTLP endpoint configured (OTEL_EXPORTER_OTLP_ENDPOINT): printed, not exported');
          return;
        }
        try {
          const result = await sink.export(spans);
          if (result.error) throw new Error(`the export of ${spans.length} spans failed: ${result.error.message}`);
          if (!options.json) err(`savepoint: ${spans.length} spans of run ${runId} exported`);
        } finally {
          await sink.shutdown();
        }
      })),
    );
}
