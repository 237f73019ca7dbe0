/**
 * The ledger's storage calls, authorized as DynamoDB authorizes them, against the role of the
 * function that makes them. Checked at the storage layer (`StorageLedger.guardStorage`), so the
 * embedded ledger, which makes no DynamoDB call, is held to the same grants as the DynamoDB one.
 *
 * Each call is the DynamoDB request the DynamoDB engine makes for it (lambdas/ledger/dynamodb-ledger.ts),
 * on the resource and with the condition key the Service Authorization Reference names
 * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazondynamodb.html):
 *
 *   primitive (StorageLedger)              DynamoDB request             resource, condition key
 *   read of one key (getRun, getCall, …;   GetItem                      the table, dynamodb:LeadingKeys = [its pk]
 *     an update's read; a task token)
 *   read of several keys (loadStep)        BatchGetItem                 the table, dynamodb:LeadingKeys = every pk
 *   put (an update's conditional put,      PutItem, one per item        the table, dynamodb:LeadingKeys = [its pk]
 *     a blob chunk, a task token)
 *   query of a partition (the              Query                        the table, dynamodb:LeadingKeys = [pk]
 *     conversation, a blob's chunks)
 *   query of an index (pending             Query                        `<table>/index/<name>`, LeadingKeys = [its partition]
 *     approvals, running runs, by id)
 *   scan (listRuns, listEffects)           Scan                         the table
 *   items written together (putItems:      TransactWriteItems: a Put    the table, dynamodb:LeadingKeys = [its pk] for each
 *     a call and its effect, a record and    (PutItem) per item written,
 *     the run item that counts it)           a ConditionCheck
 *                                            (ConditionCheckItem) per item checked
 *   a prune's run record (`prune`)         DeleteItem, conditional      the table, dynamodb:LeadingKeys = [its pk]
 *   a prune's other items                  BatchWriteItem (deletes)     the table, dynamodb:LeadingKeys = every pk
 *
 * Those are the only requests the DynamoDB engine sends: an update is a read and a whole-item
 * conditional put (the seal covers the whole item), never UpdateItem; a transaction writes the items
 * of one rule together (TransactWriteItems has no IAM action of its own:
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html), and
 * the only deletes are `savepoint prune`'s (records otherwise expire by TTL). A read the engine answers from what it remembers of its
 * own last write is authorized all the same (every role that updates may GetItem).
 *
 * One ledger instance serves every step locally, where each Lambda function on AWS has its own
 * client: the step a call comes from is carried by `ledgerAs(step, ledger)` through the call's
 * async context, and a call outside any step (the operator's, at the CLI or in a test) is the
 * account administrator's, not checked, as local/aws/iam/credentials.ts treats the operator's keys.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { StorageCall } from '../../../lambdas/ledger/storage-ledger.js';
import type { CfnTemplateJson, PhysicalNames } from '../../template/asl.js';
import type { TwinIam } from './index.js';
import type { AuthorizationRequest } from './policy.js';

/** Who makes a storage call: a step's function, of the IAM (the agent's, in a stack of several) that knows its role. */
type StepCaller = { readonly step: string; readonly iam?: GuardIam };
type GuardIam = Pick<TwinIam, 'authorizeAs' | 'servicesOf'>;
const callerStep = new AsyncLocalStorage<StepCaller>();

/**
 * The ledger as `step`'s function sees it: each of its calls, and every storage call it makes,
 * made as that step — of `iam`, when given: several agents of one stack share its ledger (and the
 * guard the first put on it), each agent's step names its own function's role.
 */
export function ledgerAs<L extends object>(step: string, ledger: L, iam?: GuardIam): L {
  const caller: StepCaller = { step, ...(iam && { iam }) };
  // One wrapper per method, made on its first use (every ledger call goes through here).
  const wrappers = new Map<PropertyKey, { method: Function; wrapper: Function }>();
  return new Proxy(ledger, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver) as unknown;
      if (typeof value !== 'function') return value;
      const known = wrappers.get(property);
      if (known?.method === value) return known.wrapper;
      const method = value as (...a: unknown[]) => unknown;
      // No closure a call: the store, then the method, its receiver and its arguments to Reflect.apply.
      const wrapper = (...args: unknown[]) => callerStep.run(caller, Reflect.apply, method, target, args);
      wrappers.set(property, { method, wrapper });
      return wrapper;
    },
  });
}

/** The ledger table's ARN in a deployment: the template's one DynamoDB table. */
export function ledgerTableArn(template: CfnTemplateJson, physical: PhysicalNames): string | undefined {
  const tables = Object.entries(template.Resources ?? {}).filter(([, resource]) => resource.Type === 'AWS::DynamoDB::Table' || resource.Type === 'AWS::DynamoDB::GlobalTable');
  if (tables.length !== 1) return undefined;
  const [id, resource] = tables[0]!;
  return physical.arn?.(id, resource);
}

/** The DynamoDB requests one storage call stands for. */
export function dynamoRequests(call: StorageCall, tableArn: string): AuthorizationRequest[] {
  if ('read' in call) {
    // Several reads of one key are one GetItem (compared in place: this runs on every ledger read).
    const [first] = call.read;
    const single = first !== undefined && call.read.every((key) => key.pk === first!.pk && key.sk === first!.sk);
    return [{ action: single ? 'dynamodb:GetItem' : 'dynamodb:BatchGetItem', resource: tableArn, context: leading(call.read.map((key) => key.pk)) }];
  }
  if ('put' in call) return call.put.map((key) => ({ action: 'dynamodb:PutItem', resource: tableArn, context: leading([key.pk]) }));
  if ('check' in call) return call.check.map((key) => ({ action: 'dynamodb:ConditionCheckItem', resource: tableArn, context: leading([key.pk]) }));
  // A prune's deletes: BatchWriteItem is authorized as itself, with every key's pk as LeadingKeys (the reference above).
  if ('delete' in call) {
    return call.batch
      ? [{ action: 'dynamodb:BatchWriteItem', resource: tableArn, context: leading(call.delete.map((key) => key.pk)) }]
      : call.delete.map((key) => ({ action: 'dynamodb:DeleteItem', resource: tableArn, context: leading([key.pk]) }));
  }
  if ('query' in call) {
    return 'pk' in call.query
      ? [{ action: 'dynamodb:Query', resource: tableArn, context: leading([call.query.pk]) }]
      : [{ action: 'dynamodb:Query', resource: `${tableArn}/index/${call.query.index}`, context: leading([call.query.partition]) }];
  }
  return [{ action: 'dynamodb:Scan', resource: tableArn }];
}

/**
 * The guard the ledger's storage engine is given (`guardStorage`): each call made as a step is
 * authorized as that step's role (`authorizeAs` throws AccessDeniedException to refuse it). A
 * step's first call reads the seal key before it (`sealKeyArn`): the DynamoDB ledger of a Lambda
 * function reads it from Secrets Manager on its first use (lambdas/adapters/aws-deps.ts); a read
 * that is refused is tried again on the next call, as a failed cold start is. (Once per step in
 * this process: the functions a local deploy publishes are not cold-started again.)
 */
export function dynamoGuard(tableArn: () => string, guardIam: GuardIam): (call: StorageCall) => void {
  const sealed = new WeakMap<GuardIam, Set<string>>();
  return (call) => {
    const caller = callerStep.getStore();
    if (caller === undefined) return;
    const { step } = caller;
    const iam = caller.iam ?? guardIam;
    let cold = sealed.get(iam);
    if (!cold) sealed.set(iam, (cold = new Set()));
    if (!cold.has(step)) {
      const sealKeyArn = iam.servicesOf(step)?.LEDGER_SEAL_SECRET_ARN;
      if (sealKeyArn !== undefined) iam.authorizeAs(step, { action: 'secretsmanager:GetSecretValue', resource: sealKeyArn });
      cold.add(step);
    }
    for (const request of dynamoRequests(call, tableArn())) iam.authorizeAs(step, request);
  };
}

/** The condition key of a request on these partitions, each named once. */
const leading = (pks: readonly string[]) => ({ 'dynamodb:LeadingKeys': pks.length === 1 ? [pks[0]!] : [...new Set(pks)] });
