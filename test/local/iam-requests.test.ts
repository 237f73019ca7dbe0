/**
 * The requests the twin's IAM decides are requests AWS could make, decided as AWS decides them:
 * every distinct request of an approved sample day (each Lambda invoke, Step Functions call,
 * ledger call as its DynamoDB request with its dynamodb:LeadingKeys, Secrets Manager, KMS and
 * EventBridge call), with the policies of the role that made it, goes to the AGPL simulator as the
 * oracle (test/support/iam-oracle.ts). The oracle refuses a request of the wrong shape (an action
 * on a resource type it does not take, an unknown condition key), so a storage primitive mapped to
 * the wrong DynamoDB action or resource would fail here, not only a wrong decision.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import type { Caller } from '../../local/aws/iam/authorizer.js';
import { deploy } from '../../local/aws/iam/deployment.js';
import type { AuthorizationRequest, Decision } from '../../local/aws/iam/policy.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { postDecision } from '../support/agent-harness.js';
import { iamOracle } from '../support/iam-oracle.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * Where the oracle's data and AWS part: the Service Authorization Reference lists no resource type
 * for SendTaskSuccess/Failure/Heartbeat (so the oracle refuses the request on a state machine ARN),
 * yet AWS authorizes them on the state machine of the token's execution — its AccessDeniedException
 * names that ARN ("not authorized to perform: states:SendTaskFailure on resource:
 * arn:aws:states:…:stateMachine:…", NOAA-OWP/hydrovis#837), and a grant on it works (tested in
 * aws/aws-cdk#8486). The twin follows AWS (local/aws/iam/step-functions.ts).
 */
const ORACLE_DIFFERS = new Set(['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat']);

type Seen = { role: string; session: string; request: AuthorizationRequest; decision: Decision };

async function sampleDay(template: CfnTemplateJson, ledger: 'embedded' | 'dynalite'): Promise<{ h: Harness; seen: Map<string, Seen> }> {
  const h = await startHarness({
    recovery: false,
    ledger,
    template,
    onAsked: (approval: ApprovalRecord, stack: Pick<Harness['stack'], 'endpoints'>) => void postDecision(stack, approval.approvalId, { decision: 'approve', reason: 'checked' }),
  });
  cleanups.push(() => h.stack.close());
  const seen = new Map<string, Seen>();
  cleanups.push(
    h.stack.iam!.authorizer.onDecision((caller: Caller, request, decision) => {
      if (!('role' in caller)) return;
      seen.set(JSON.stringify([caller.role, request]), { role: caller.role, session: caller.session, request, decision });
    }) as () => Promise<void>,
  );
  await h.run({ runId: `requests-${ledger}`, input: sampleInput });
  return { h, seen };
}

describe.each(['embedded', 'dynalite'] as const)('every request the twin decides on a sample day (%s ledger)', (ledger) => {
  it('is one AWS could make, and the oracle decides it the same', async () => {
    const template = (await cachedTemplate('refund-reconciler')) as CfnTemplateJson;
    const { h, seen } = await sampleDay(template, ledger);
    const oracle = iamOracle(template, deploy(template));
    const actions = new Set([...seen.values()].map(({ request }) => request.action));
    for (const expected of ['lambda:InvokeFunction', 'dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:Query', 'secretsmanager:GetSecretValue', 'kms:GenerateMac', 'kms:VerifyMac', 'events:PutEvents']) {
      expect(actions).toContain(expected);
    }
    const disagreements: string[] = [];
    for (const { role, session, request, decision } of seen.values()) {
      if (ORACLE_DIFFERS.has(request.action)) continue;
      // Key policies and secrets' policies name roles: the oracle is told who calls.
      const answer = await oracle(h.stack.iam!.roles.roles.get(role)!.policies, request, { role, session });
      if (answer !== decision) disagreements.push(`${role} ${request.action} ${request.resource} ${JSON.stringify(request.context ?? {})}: twin ${decision}, oracle ${answer ?? 'refused the request'}`);
    }
    expect(disagreements).toEqual([]);
    expect(seen.size).toBeGreaterThan(50); // 82 distinct requests on the sample day when this was written
    expect([...seen.values()].every(({ decision }) => decision === 'Allowed')).toBe(true);
  }, 120_000);
});
