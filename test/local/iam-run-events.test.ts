/**
 * The twin reads a run's events as the RunEvents function's role (local/runtime/local-stack.ts): its
 * template grants (GetItem and Query on runs' and blobs' partitions) are what it reads with, so a
 * grant taken out of the template is a stream refused, as on AWS.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';
import { identityPolicies } from '../support/role-policies.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function harness(template?: CfnTemplateJson): Promise<Harness> {
  const started = await startHarness({ recovery: false, ...(template && { template }) });
  cleanups.push(() => started.stack.close());
  return started;
}

type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };

/** The template without `action` in the RunEvents function's policy. */
async function withoutRunEventsGrant(action: string): Promise<CfnTemplateJson> {
  const template = structuredClone(await cachedTemplate('refund-reconciler')) as Template;
  let removed = 0;
  for (const { id, document: policyDocument } of identityPolicies(template.Resources as never)) {
    if (!id.startsWith('ControlPlaneStackApiRunEventsFunctionServiceRole')) continue;
    const document = policyDocument as { Statement: { Action: string | string[] }[] };
    document.Statement = document.Statement.flatMap((statement) => {
      const actions = [statement.Action].flat();
      if (!actions.includes(action)) return [statement];
      removed++;
      const rest = actions.filter((a) => a !== action);
      return rest.length > 0 ? [{ ...statement, Action: rest }] : [];
    });
  }
  expect(removed).toBe(1);
  return template as CfnTemplateJson;
}

async function startRun(h: Harness, runId: string) {
  const response = await fetch(h.stack.endpoints.runs, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ runId, input: sampleInput, config: { approvalTimeoutSeconds: 3600 } }) });
  expect(response.status).toBe(202);
}

describe("the run events stream as RunEvents' role", () => {
  it('streams a run with the role\'s grants, and is refused (5xx, nothing streamed) when the role loses dynamodb:GetItem', async () => {
    const granted = await harness();
    await startRun(granted, 'followed');
    const stop = new AbortController();
    const stream = await fetch(`${granted.stack.endpoints.runs}/followed/events`, { signal: stop.signal });
    expect(stream.status).toBe(200);
    const reader = stream.body!.getReader();
    let text = '';
    while (!text.includes('id: a.run')) text += new TextDecoder().decode((await reader.read()).value);
    stop.abort();

    const refused = await harness(await withoutRunEventsGrant('dynamodb:GetItem'));
    await startRun(refused, 'not-followed');
    const denied = await fetch(`${refused.stack.endpoints.runs}/not-followed/events`);
    expect(denied.status).toBeGreaterThanOrEqual(500);
    expect(await denied.text()).toMatch(/not authorized to perform: dynamodb:GetItem/);
  });
});
