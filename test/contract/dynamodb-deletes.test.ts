import { Role, AccountRootPrincipal } from 'aws-cdk-lib/aws-iam';
import { Template } from 'aws-cdk-lib/assertions';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { BatchWriteCommand, DeleteCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleStack } from '../../infra/example.js';
import { LedgerTable } from '../../infra/ledger-table.js';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import { ephemeralSealer } from '../../lambdas/ledger/seal.js';
import type { StorageCall } from '../../lambdas/ledger/storage-ledger.js';
import { localAwsConfig } from '../../local/services/aws-config.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/services/dynamodb.js';
import { dynamoRequests, ledgerTableArn } from '../../local/aws/iam/dynamodb.js';
import { twinIam } from '../../local/aws/iam/index.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { ledgerTableFromTemplate } from '../../local/template/synthesize.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { assertionApp } from '../infra/example-template.js';
import { at, call, holder, run } from './fixtures.js';
import { sixRuns } from './spec/prune.js';
import { documentClient } from '../support/document-client.js';

/**
 * A prune's reads and deletes on DynamoDB (issue 26, item 9), on dynalite with the real SDK — what
 * prune does on every engine is test/contract/spec/prune.ts: a record altered in the table, a
 * prune that died between its conditional deletes and its batch, a run that changed before its
 * conditional delete, DynamoDB's batch rules, and the operator's grant as the twin's IAM decides it.
 */
let dynamo: LocalDynamo;
let tables = 0;
let tableInput: (name: string) => Parameters<typeof ensureTable>[1];
beforeAll(async () => {
  dynamo = await startDynamo();
  const template = await cachedTemplate('agent');
  tableInput = (name) => ledgerTableFromTemplate(template, name);
});
afterAll(async () => dynamo?.close());

const doc = () => documentClient(dynamo, { marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: true } });
/** Every item of a partition, as stored. */
const partition = async (table: string, pk: string) =>
  (await doc().send(new QueryCommand({ TableName: table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true }))).Items ?? [];

/** A fresh table with spec/prune.ts `sixRuns` (long's 60 turns: more than one BatchWriteItem). */
async function ledgerWithRuns(options: { client?: DynamoDBClient; sleep?: (ms: number) => Promise<void> } = {}) {
  const table = `prune-${++tables}`;
  await ensureTable(dynamo.client, tableInput(table));
  const sealer = ephemeralSealer();
  const ledger = new DynamoDbLedger(options.client ?? dynamo.client, table, sealer, options.sleep);
  await sixRuns(ledger);
  return { table, ledger, sealer };
}

describe("DynamoDbLedger.prune: the table's items, its conditional and batch deletes", () => {
  it('names a prune record that was altered, and a pruned run that came back', async () => {
    const { table, ledger, sealer } = await ledgerWithRuns();
    await ledger.prune(at(25), at(100));
    const [stored] = await partition(table, 'PRUNED');
    await doc().send(new PutCommand({ TableName: table, Item: { ...stored, records: 1 } }));
    const problems = await ledger.verifyPrunes();
    expect(problems).toEqual([expect.stringMatching(/record PRUNED\/PRUNE#2026-11-29T02:01:40\.000Z#0 fails verification: its seal does not match/)]);
    await expect(ledger.prunes()).rejects.toThrow(/PRUNED\/PRUNE#.*fails verification/);
    // A prune does not build on a record that does not verify.
    await expect(ledger.prune(at(25), at(200))).rejects.toThrow(/fails verification/);

    await doc().send(new PutCommand({ TableName: table, Item: stored }));
    // A run under the pruned id is refused; a ledger pruned before that refusal (0.18.0), which has
    // no item saying the id was pruned, let one come back: verify names it.
    await expect(ledger.createRun(run('old'))).rejects.toMatchObject({ name: 'Agent.InvalidInput' });
    await doc().send(new DeleteCommand({ TableName: table, Key: { pk: 'PRUNEDRUN#old', sk: 'PRUNED' } }));
    // (Another Lambda's instance: this one remembers the item it read.)
    await new DynamoDbLedger(dynamo.client, table, sealer).createRun(run('old'));
    expect(await ledger.verifyPrunes()).toEqual([`prune record of ${at(100).toISOString()}: run old is pruned, yet its records are in the ledger`]);
  });

  it("finishes a prune that stopped after its run records went: the next prune deletes what was left", async () => {
    const { table, ledger, sealer } = await ledgerWithRuns();
    // A prune whose process died after the conditional deletes, before the batch: its deletes never reach the table.
    const dying = new DynamoDbLedger(dynamo.client, table, sealer);
    dying.guardStorage((storageCall) => {
      if ('delete' in storageCall && storageCall.batch) throw new Error('killed');
    });
    await expect(dying.prune(at(25), at(100))).rejects.toThrow('killed');
    expect((await partition(table, 'RUN#old')).length).toBeGreaterThan(0);
    expect(await ledger.verifyPrunes()).toEqual(['long', 'old'].map((runId) => `prune record of ${at(100).toISOString()}: run ${runId} is pruned, yet its records are in the ledger`));
    expect(await ledger.prune(at(5), at(200))).toEqual([]);
    for (const pk of ['RUN#old', 'BLOB#old', 'RUN#long']) expect(await partition(table, pk), pk).toEqual([]);
    expect(await ledger.verifyPrunes()).toEqual([]);
  });

  it('keeps a run that changed between the scan and its delete (a fork recorded on it), and rewrites the record without it', async () => {
    // Another writer (`savepoint fork` of old) lands just before old's conditional delete reaches the table.
    const client = new DynamoDBClient({ ...localAwsConfig, endpoint: dynamo.endpoint });
    let forker: DynamoDbLedger | undefined;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        // (Marshalled or not yet, by the document client's own middleware: either form.)
        const pk = (args.input as { Key?: { pk?: string | { S?: string } } }).Key?.pk;
        if (context.commandName === 'DeleteItemCommand' && (typeof pk === 'string' ? pk : pk?.S) === 'RUN#old' && forker) {
          await forker.recordFork('old', { runId: 'old-fork', turn: 1 });
          forker = undefined;
        }
        return next(args);
      },
      { step: 'initialize', name: 'forkFirst' },
    );
    const { table, ledger, sealer } = await ledgerWithRuns({ client });
    forker = new DynamoDbLedger(dynamo.client, table, sealer);
    const [record] = await ledger.prune(at(25), at(100));
    expect(record).toMatchObject({ runIds: ['long'], records: 61 });
    expect(record!.writes).toBeUndefined();
    expect(await ledger.prunes()).toEqual([record]);
    expect((await ledger.getRun('old'))?.forks).toEqual([{ runId: 'old-fork', turn: 1 }]);
    expect((await ledger.listConversation('old')).turns).toHaveLength(2);
    expect(await partition(table, 'RUN#long')).toEqual([]);
    expect(await ledger.verifyPrunes()).toEqual([]);
    client.destroy();
  });

  it("sends DynamoDB's unprocessed deletes again, at most 25 a request, after the backoff it was given", async () => {
    // DynamoDB may process part of a batch and return the rest as UnprocessedItems (throttled):
    // this client's first BatchWriteItem of each batch sends only half of it on, and reports the other half unprocessed.
    const client = new DynamoDBClient({ ...localAwsConfig, endpoint: dynamo.endpoint });
    const sizes: number[] = [];
    let throttle = true;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        if (context.commandName !== 'BatchWriteItemCommand') return next(args);
        const input = args.input as { RequestItems: Record<string, unknown[]> };
        const [table, requests] = Object.entries(input.RequestItems)[0]!;
        sizes.push(requests.length);
        if (!throttle || requests.length < 2) return ((throttle = true), next(args));
        throttle = false;
        const kept = requests.slice(0, Math.ceil(requests.length / 2));
        const result = await next({ ...args, input: { ...input, RequestItems: { [table]: kept } } });
        (result.output as { UnprocessedItems?: Record<string, unknown[]> }).UnprocessedItems = { [table]: requests.slice(kept.length) };
        return result;
      },
      { step: 'initialize', name: 'throttleHalf' },
    );
    const waits: number[] = [];
    const { table, ledger } = await ledgerWithRuns({ client, sleep: async (ms) => void waits.push(ms) });
    await ledger.prune(at(25), at(100));
    for (const pk of ['RUN#old', 'TOKEN#old', 'BLOB#old', 'RUN#long']) expect(await partition(table, pk), pk).toEqual([]);
    expect(Math.max(...sizes)).toBe(25);
    // 66 deletes after the two run records: batches of 25, 25, 16, each first answered half-processed.
    expect(sizes).toEqual([25, 12, 25, 12, 16, 8]);
    expect(waits).toEqual([40, 40, 40]);
    client.destroy();
  });
});

describe("the twin's DynamoDB holds a batch to DynamoDB's bound", () => {
  it('refuses a BatchWriteItem of 26 deletes, as DynamoDB does (at most 25 a request)', async () => {
    const table = `prune-${++tables}`;
    await ensureTable(dynamo.client, tableInput(table));
    const deletes = (count: number) => Array.from({ length: count }, (_, index) => ({ DeleteRequest: { Key: { pk: `RUN#x${index}`, sk: 'RUN' } } }));
    await expect(doc().send(new BatchWriteCommand({ RequestItems: { [table]: deletes(26) } }))).rejects.toThrow(/Member must have length less than or equal to 25/);
    await expect(doc().send(new BatchWriteCommand({ RequestItems: { [table]: deletes(25) } }))).resolves.toMatchObject({ UnprocessedItems: {} });
  });
});

describe("the operator's grant (LedgerTable.grantPrune), as the twin's IAM decides it", () => {
  let template: CfnTemplateJson;
  beforeAll(() => {
    const app = assertionApp();
    const stack = exampleStack(app);
    new Role(stack, 'Operator', { assumedBy: new AccountRootPrincipal() });
    const granted = new Role(stack, 'PruneOperator', { assumedBy: new AccountRootPrincipal() });
    stack.node.findAll().find((construct): construct is LedgerTable => construct instanceof LedgerTable)!.grantPrune(granted);
    template = Template.fromStack(stack).toJSON() as CfnTemplateJson;
  }, 120_000);

  /** The ledger, each storage call authorized as the role `roleId` of the template (the operator's credentials at `--stack`). */
  async function ledgerAs(roleId: string, deployed = template) {
    const built = await ledgerWithRuns();
    const iam = twinIam(deployed);
    const roleIdOf = (prefix: string) => [...iam.roles.roles.keys()].find((id) => id.startsWith(prefix))!;
    const tableArn = ledgerTableArn(deployed, iam.physical)!;
    const asked: StorageCall[] = [];
    built.ledger.guardStorage((storageCall) => {
      asked.push(storageCall);
      for (const request of dynamoRequests(storageCall, tableArn)) iam.authorizer.authorize({ role: roleIdOf(roleId), session: 'operator' }, request);
    });
    return { ...built, asked, authorize: (request: Parameters<typeof iam.authorizer.authorize>[1]) => iam.authorizer.authorize({ role: roleIdOf(roleId), session: 'operator' }, request), tableArn };
  }

  it('lets a role with the grant prune, by every request the prune makes', async () => {
    const { ledger, asked } = await ledgerAs('PruneOperator');
    expect(await ledger.prune(at(25), at(100))).toMatchObject([{ runIds: ['long', 'old'] }]);
    expect(await ledger.verifyPrunes()).toEqual([]);
    expect(asked.some((storageCall) => 'delete' in storageCall && storageCall.batch)).toBe(true);
    expect(asked.some((storageCall) => 'delete' in storageCall && !storageCall.batch)).toBe(true);
  });

  it('refuses a role without it before anything is written or deleted', async () => {
    const { table, ledger } = await ledgerAs('Operator');
    await expect(ledger.prune(at(25), at(100))).rejects.toThrow(/AccessDenied|not authorized/);
    expect((await partition(table, 'RUN#old')).length).toBeGreaterThan(0);
    expect(await partition(table, 'PRUNED')).toEqual([]);
  });

  it("stops, removing nothing, on the grant of a stack deployed before 0.18.0 (no PRUNEDRUN#), saying what to deploy", async () => {
    // That grant: its put statement without the partition of the items that say a run id was pruned
    // (['PRUNED', 'PRUNEDRUN#*'] -> ['PRUNED']; the functions' own statements name it alone, untouched).
    const withPruneAccess = JSON.stringify(template);
    const before = JSON.parse(withPruneAccess.replaceAll('"PRUNED","PRUNEDRUN#*"', '"PRUNED"')) as CfnTemplateJson;
    expect(withPruneAccess.split('"PRUNED","PRUNEDRUN#*"')).toHaveLength(2);
    const { table, ledger } = await ledgerAs('PruneOperator', before);
    await expect(ledger.prune(at(25), at(100))).rejects.toThrow(/^prune: .*not authorized.* — a prune says of each run it removes that its id was pruned \(PRUNEDRUN#\w+\), which the grant of savepoint 0\.18\.0 allows \(LedgerTable\.grantPrune\): deploy the stack with it; nothing was pruned$/);
    for (const pk of ['RUN#old', 'RUN#long']) expect((await partition(table, pk)).length, pk).toBeGreaterThan(0);
    expect(await partition(table, 'PRUNED')).toEqual([]);
    expect(await ledger.verifyPrunes()).toEqual([]);
  });

  it("does not let the grant delete a business-key effect, nor put outside the prune records", async () => {
    const { authorize, tableArn } = await ledgerAs('PruneOperator');
    const effect = { pk: 'EFFECT#refunds:issue_refund:rr_1', sk: 'EFFECT' };
    for (const request of [...dynamoRequests({ delete: [effect] }, tableArn), ...dynamoRequests({ delete: [{ pk: 'RUN#old', sk: 'RUN' }, effect], batch: true }, tableArn)]) {
      expect(() => authorize(request), request.action).toThrow(/not authorized|AccessDenied/);
    }
    expect(() => dynamoRequests({ put: [{ pk: 'RUN#old', sk: 'RUN' }] }, tableArn).forEach(authorize)).toThrow(/not authorized|AccessDenied/);
    expect(() => dynamoRequests({ read: [{ pk: 'TOKEN#old', sk: 'TURN#0003#CALL#01#APPROVAL' }] }, tableArn).forEach(authorize)).toThrow(/not authorized|AccessDenied/);
  });
});

describe("the operator's grant to settle escalated effects (LedgerTable.grantEffects), as the twin's IAM decides it", () => {
  let template: CfnTemplateJson;
  beforeAll(() => {
    const app = assertionApp();
    const stack = exampleStack(app);
    new Role(stack, 'Operator', { assumedBy: new AccountRootPrincipal() });
    const granted = new Role(stack, 'EffectsOperator', { assumedBy: new AccountRootPrincipal() });
    stack.node.findAll().find((construct): construct is LedgerTable => construct instanceof LedgerTable)!.grantEffects(granted);
    template = Template.fromStack(stack).toJSON() as CfnTemplateJson;
  }, 120_000);

  /** A table with an escalated effect (written unchecked), then each storage call authorized as the role `roleId`. */
  async function escalatedAs(roleId: string) {
    const { table, ledger } = await ledgerWithRuns();
    // A run and an effect of its own, beside sixRuns'.
    const by = holder({ runId: 'escalating', key: 'refunds:issue_refund:escalated' });
    await ledger.claimCall(call({ runId: by.runId, turn: by.turn, call: by.call, leaseUntil: by.leaseUntil, effectKey: by.key }), at(0), by);
    await ledger.completeCall({ runId: by.runId, turn: by.turn, call: by.call, outcome: { outcome: 'error', result: '{"error":"outcome_unknown"}', latencyMs: 0 }, now: at(1), effect: { key: by.key, unknown: true } });
    const iam = twinIam(template);
    const role = [...iam.roles.roles.keys()].find((id) => id.startsWith(roleId))!;
    const tableArn = ledgerTableArn(template, iam.physical)!;
    ledger.guardStorage((storageCall) => {
      for (const request of dynamoRequests(storageCall, tableArn)) iam.authorizer.authorize({ role, session: 'operator' }, request);
    });
    return { table, ledger, key: by.key };
  }

  it('lets a role with the grant list and resolve an escalated effect', async () => {
    const { ledger, key } = await escalatedAs('EffectsOperator');
    expect(await ledger.listEffects()).toEqual(expect.arrayContaining([expect.objectContaining({ key, status: 'completed', outcome: 'error' })]));
    expect(await ledger.resolveEffect(key, { as: 'not_sent', by: 'ops', reason: 'not at the provider' }, at(2))).toMatchObject({ status: 'released' });
    // Its effects only: no run's record.
    await expect(ledger.getRun('old')).rejects.toThrow(/AccessDenied|not authorized/);
  });

  it('refuses a role without it, changing nothing', async () => {
    const { table, ledger, key } = await escalatedAs('Operator');
    await expect(ledger.resolveEffect(key, { as: 'not_sent', by: 'ops', reason: 'x' }, at(2))).rejects.toThrow(/AccessDenied|not authorized/);
    expect(await partition(table, `EFFECT#${key}`)).toMatchObject([{ status: 'completed' }]);
  });
});
