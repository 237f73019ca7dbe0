import { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { afterEach, describe, expect, it } from 'vitest';
import { exporterSink } from '../../lambdas/telemetry/export.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { synthesizeTemplate } from '../../local/template/synthesize.js';
import { counterAgent } from '../support/counter-agent.js';
import { identityPolicies } from '../support/role-policies.js';

/**
 * A traced run's end reads its conversation back for the budget-check spans (lambdas/telemetry/
 * tracing-ledger.ts). On AWS that Query is allowed by the `traceRunEnd` grant a traced deployment
 * gives the functions that end a run (infra/durable-agent.ts); locally, with tracing on, the engine
 * runs the stack with that deployment's policies, and the read goes through the twin's IAM as
 * Finalize's role.
 */

let stack: LocalStack | undefined;
afterEach(async () => {
  await stack?.close();
  stack = undefined;
});

const AGENT = counterAgent({ calls: 4, perTurn: 2 });

type Statement = { Action: string | string[] };
type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };

/** The traced template without `dynamodb:Query` in Finalize's policy: what its `traceRunEnd` grant gave it, and its own (for the agent's report). */
async function withoutFinalizeQuery(): Promise<CfnTemplateJson> {
  const template = structuredClone(await cachedTemplate(AGENT.name, { traced: true })) as Template;
  let removed = 0;
  for (const { id, document: policyDocument } of identityPolicies(template.Resources as never)) {
    if (!id.startsWith('AgentFinalizeFunctionServiceRole')) continue;
    for (const statement of (policyDocument as { Statement: Statement[] }).Statement) {
      const actions = [statement.Action].flat();
      if (actions.includes('dynamodb:Query')) removed++;
      statement.Action = actions.filter((action) => action !== 'dynamodb:Query');
    }
  }
  // Its traceRunEnd grant and its own (one statement or two, as CDK merges them): none is left.
  expect(removed).toBeGreaterThan(0);
  return template as CfnTemplateJson;
}

async function tracedRun(template?: CfnTemplateJson) {
  const exporter = new InMemorySpanExporter();
  const logged: string[] = [];
  stack = await startLocalStack({ agent: AGENT, retryDelayMs: 1, tracing: exporterSink(exporter, resourceFromAttributes({ 'service.name': 'run-end' })), log: (line) => logged.push(line), ...(template && { template }) });
  const runId = 'run-end-1';
  const { executionArn } = stack.engine.startExecution({ name: runId, input: { runId, input: { id: 'a' } } });
  await waitForChain(stack.engine, stack.ledger, runId, executionArn);
  const spans = exporter.getFinishedSpans().map((span) => span.name);
  return { status: (await stack.ledger.getRun(runId))!.status, spans, logged, denied: stack.engine.iamDecisions()!.denied };
}

describe("a traced run's end reads its conversation through the traceRunEnd grant", { timeout: 120_000 }, () => {
  it("with tracing on, runs with the traced deployment's policies: the read is allowed as Finalize, and a budget-check span is exported per check", async () => {
    const traced = await tracedRun();
    expect(traced.status).toBe('succeeded');
    expect(traced.denied).toBe(0);
    expect(traced.logged.filter((line) => line.startsWith('span export failed'))).toEqual([]);
    expect(traced.spans.filter((name) => name === 'savepoint.budget_check').length).toBeGreaterThanOrEqual(3);
  });

  it("refuses the read when Finalize's role lacks the grant (AccessDeniedException): the run still ends, without its budget-check spans", async () => {
    const refused = await tracedRun(await withoutFinalizeQuery());
    expect(refused.status).toBe('succeeded');
    expect(refused.denied).toBeGreaterThanOrEqual(1);
    expect(refused.logged.join('\n')).toMatch(/span export failed: AccessDeniedException: .*AgentFinalizeFunction\w+ is not authorized to perform: dynamodb:Query on resource: arn:aws:dynamodb:/);
    expect(refused.spans).not.toContain('savepoint.budget_check');
    expect(refused.spans.filter((name) => name.startsWith('chat ')).length).toBeGreaterThan(0);
  });

  it('takes only the policies from the traced deployment: the same definition, so a run started untraced resumes traced', async () => {
    const [plain, traced] = await Promise.all([synthesizeTemplate(AGENT.name), synthesizeTemplate(AGENT.name, { traced: true })]);
    expect(Object.keys(traced.Resources)).toEqual(Object.keys(plain.Resources));
    const changed = Object.keys(plain.Resources).filter((id) => JSON.stringify(plain.Resources[id]) !== JSON.stringify(traced.Resources[id]));
    expect(changed.map((id) => id.replace(/ServiceRole\w+$/, '')).sort()).toEqual(['AgentFinalizeFunction', 'ControlPlaneExecutionStoppedFunction', 'ControlPlaneRecoveryFunction', 'ControlPlaneSweepFunction']);
  });
});
