/**
 * The twin's IAM holds the ledger to each role's DynamoDB grants, at the storage layer: the
 * embedded ledger (which makes no DynamoDB call) and the DynamoDB ledger on dynalite are refused
 * the same calls, with AccessDeniedException, as AWS would refuse them.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import type { EffectHolder } from '../../lambdas/ledger/ledger.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { dynamoRequests, ledgerAs } from '../../local/aws/iam/dynamodb.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { at, call, holder } from '../contract/fixtures.js';
import { expiringApprovals } from '../support/manual-clock.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';
import { identityPolicies } from '../support/role-policies.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The stack on the manual clock: an approval nobody decides expires at its deadline with no real wait. */
async function harness(ledger: 'embedded' | 'dynalite', template?: CfnTemplateJson): Promise<Harness> {
  const started = await startHarness({ recovery: false, ledger, ...(template && { template }), ...expiringApprovals() });
  cleanups.push(() => started.stack.close());
  return started;
}

type Statement = { Action: string | string[]; Resource: unknown; Condition?: Record<string, Record<string, string[]>> };
type Template = { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };

/** The template with `change` applied to the DynamoDB table statement of the policy whose logical id starts with `policyPrefix`. */
async function withTableStatement(policyPrefix: string, change: (statement: Statement) => Statement | undefined): Promise<CfnTemplateJson> {
  const template = structuredClone(await cachedTemplate('refund-reconciler')) as Template;
  let changed = 0;
  for (const { id, document: policyDocument } of identityPolicies(template.Resources as never)) {
    if (!id.startsWith(policyPrefix)) continue;
    const document = policyDocument as { Statement: Statement[] };
    document.Statement = document.Statement.flatMap((statement) => {
      // The table statement, not the one that notes which run an execution drives (EXEC#, its own partition).
      if (![statement.Action].flat().includes('dynamodb:PutItem') || JSON.stringify(statement.Condition ?? {}).includes('EXEC#')) return [statement];
      changed++;
      const next = change(statement);
      return next ? [next] : [];
    });
  }
  expect(changed).toBe(1);
  return template as CfnTemplateJson;
}

const withoutAction = (action: string) => (statement: Statement) => ({ ...statement, Action: [statement.Action].flat().filter((a) => a !== action) });

describe.each(['embedded', 'dynalite'] as const)("the twin's IAM on the %s ledger", (ledger) => {
  it('authorizes every ledger call of the sample day as its function role, none refused', async () => {
    const h = await harness(ledger);
    const finished = await h.run({ runId: `ledger-iam-${ledger}`, input: sampleInput, config: { approvalTimeoutSeconds: 1 } });
    expect(finished.status).toBe('SUCCEEDED');
    const decisions = h.stack.engine.iamDecisions()!;
    // At least a read and a put per Task on top of each invoke: the ledger is checked.
    const tasks = Object.values(finished.states).reduce((sum, state) => sum + state.invocations, 0);
    expect(decisions.allowed).toBeGreaterThan(3 * tasks);
    expect(decisions.denied).toBe(0);
  });

  it("refuses StartRun's createRun when its role loses dynamodb:PutItem: AccessDeniedException reaches the step", async () => {
    const h = await harness(ledger, await withTableStatement('AgentStartRunFunctionServiceRole', withoutAction('dynamodb:PutItem')));
    const finished = await h.run({ runId: `no-put-${ledger}`, input: sampleInput });
    expect(finished.status).toBe('FAILED');
    const failed = finished.history.find((event) => event.type === 'TaskFailed')!;
    expect(failed.taskFailedEventDetails).toMatchObject({ error: 'AccessDeniedException' });
    expect(failed.taskFailedEventDetails!.cause).toMatch(
      /assumed-role\/AgentStartRunFunctionServiceRole\w+\/AgentStartRunFunction\w+ is not authorized to perform: dynamodb:PutItem on resource: arn:aws:dynamodb:us-east-1:000000000000:table\/\w+ because no identity-based policy allows the dynamodb:PutItem action/,
    );
    expect(h.stack.engine.iamDecisions()!.denied).toBeGreaterThanOrEqual(1);
  });

  it("refuses RequestApproval's read of the run's earlier calls (a Query: its function's cache is its own, cold at first) without dynamodb:Query", async () => {
    const h = await harness(ledger, await withTableStatement('AgentRequestApprovalFunctionServiceRole', withoutAction('dynamodb:Query')));
    const finished = await h.run({ runId: `no-query-${ledger}`, input: sampleInput });
    expect(finished.status).toBe('FAILED');
    const failed = finished.history.find((event) => event.type === 'TaskFailed' && event.taskFailedEventDetails?.error === 'AccessDeniedException')!;
    expect(failed.taskFailedEventDetails!.cause).toMatch(/AgentRequestApprovalFunction\w+ is not authorized to perform: dynamodb:Query on resource: arn:aws:dynamodb:us-east-1:000000000000:table\/\w+ because/);
  });

  it("refuses CallTool's write of a call whose effect it only checks (TransactWriteItems' ConditionCheck) without dynamodb:ConditionCheckItem", async () => {
    // A claim writes both items or neither; a ConditionCheck is made when one of the two is kept
    // as read: here run r1's call is completed after run r2 took its effect over (r1's lease and
    // settle time run out) and completed it — r1's call is written, the effect only checked.
    const completedAfterTakeover = async (h: Harness) => {
      const ok = { outcome: 'ok' as const, result: '{"id":"re_1"}', latencyMs: 4 };
      // The effect is the deployed agent's own (its roles reach no other agent's: infra/ledger-table.ts partitionsOf).
      const key = 'refund-reconciler:issue_refund:rr_1';
      const first = holder({ key, settleMs: 5_000 });
      const second = holder({ key, runId: 'r2', turn: 5, call: 2, leaseUntil: at(100).toISOString() });
      const claim = (by: EffectHolder, now: Date) => h.stack.ledger.claimCall(call({ runId: by.runId, turn: by.turn, call: by.call, leaseUntil: by.leaseUntil, effectKey: by.key }), now, by);
      expect(await claim(first, at(0))).toMatchObject({ claimed: true });
      expect(await claim(second, at(36))).toMatchObject({ claimed: true, effect: { runId: 'r2' } });
      await h.stack.ledger.completeCall({ runId: 'r2', turn: 5, call: 2, outcome: ok, now: at(37), effect: { key: second.key } });
      return ledgerAs(Steps.CallTool, h.stack.ledger).completeCall({ runId: 'r1', turn: 3, call: 1, outcome: ok, now: at(38), effect: { key: first.key } });
    };
    expect(await completedAfterTakeover(await harness(ledger))).toMatchObject({ runId: 'r1', status: 'completed' });
    const h = await harness(ledger, await withTableStatement('AgentCallToolFunctionServiceRole', withoutAction('dynamodb:ConditionCheckItem')));
    const refused = await completedAfterTakeover(h).then(
      () => undefined,
      (error: Error) => error,
    );
    expect(refused?.name).toBe('AccessDeniedException');
    expect(refused?.message).toMatch(
      /assumed-role\/AgentCallToolFunctionServiceRole\w+\/AgentCallToolFunction\w+ is not authorized to perform: dynamodb:ConditionCheckItem on resource: arn:aws:dynamodb:us-east-1:000000000000:table\/\w+ because/,
    );
    // Refused as one transaction: r1's call is still in flight.
    expect(await h.stack.ledger.getCall('r1', 3, 1)).toMatchObject({ status: 'in_flight' });
  });

  it("refuses CallModel's batched read when its dynamodb:LeadingKeys no longer take the run's partition", async () => {
    // The kill flag and the breakers still allowed, the runs not.
    const narrowed = (statement: Statement) => ({ ...statement, Condition: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['GLOBAL', 'BREAKER#*', 'BLOB#*'] } } });
    const h = await harness(ledger, await withTableStatement('AgentCallModelFunctionServiceRole', narrowed));
    const finished = await h.run({ runId: `narrow-${ledger}`, input: sampleInput });
    expect(finished.status).toBe('FAILED');
    const failed = finished.history.find((event) => event.type === 'TaskFailed' && event.taskFailedEventDetails?.error === 'AccessDeniedException')!;
    expect(failed.taskFailedEventDetails!.cause).toMatch(/assumed-role\/AgentCallModelFunctionServiceRole\w+\/\w+ is not authorized to perform: dynamodb:(BatchGetItem|GetItem) on resource: arn:aws:dynamodb:/);
  });
});

describe('a storage call as DynamoDB authorizes it', () => {
  const table = 'arn:aws:dynamodb:us-east-1:000000000000:table/Ledger';
  it('is GetItem for one key, BatchGetItem for several, with every partition as dynamodb:LeadingKeys', () => {
    expect(dynamoRequests({ read: [{ pk: 'RUN#a', sk: 'RUN' }, { pk: 'RUN#a', sk: 'RUN' }] }, table)).toEqual([{ action: 'dynamodb:GetItem', resource: table, context: { 'dynamodb:LeadingKeys': ['RUN#a'] } }]);
    expect(dynamoRequests({ read: [{ pk: 'RUN#a', sk: 'RUN' }, { pk: 'GLOBAL', sk: 'KILL' }] }, table)).toEqual([{ action: 'dynamodb:BatchGetItem', resource: table, context: { 'dynamodb:LeadingKeys': ['RUN#a', 'GLOBAL'] } }]);
  });
  it('is one PutItem per item, a Query on the table or on the index ARN, a Scan', () => {
    expect(dynamoRequests({ put: [{ pk: 'BLOB#a', sk: 'd#00000' }, { pk: 'BLOB#a', sk: 'd#00001' }] }, table)).toHaveLength(2);
    expect(dynamoRequests({ query: { index: 'pendingApprovals', partition: 'PENDING' } }, table)).toEqual([{ action: 'dynamodb:Query', resource: `${table}/index/pendingApprovals`, context: { 'dynamodb:LeadingKeys': ['PENDING'] } }]);
    expect(dynamoRequests({ scan: true }, table)).toEqual([{ action: 'dynamodb:Scan', resource: table }]);
  });
});
