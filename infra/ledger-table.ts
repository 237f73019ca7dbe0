import { RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import { AttributeType, Billing, ProjectionType, TableV2 } from 'aws-cdk-lib/aws-dynamodb';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { PolicyStatement, type IGrantable } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { onlyReaders, principalArns } from './keys.js';
import { InlinePolicyRole } from './inline-policy-role.js';
import { topLevelStack } from './top-level-stack.js';
import { StepFunction } from './step-function.js';
import { LedgerIndexes } from '../lambdas/ledger/dynamodb-ledger.js';
import type { ApprovalRecord } from '../lambdas/records/ledger-records.js';

/**
 * What the GSIs project: only what their queries read (lambdas/ledger/dynamodb-ledger.ts), never
 * the task token. `findApproval` reads the item's key fields from `byApprovalId`, then the item
 * itself; `listPendingApprovals` lists what a person sees of a pending approval (the approval API's
 * `publicApproval`, the CLI, the expiry sweep — which wakes the execution with the token it reads
 * from the approval's own `TOKEN#` item, never from an index).
 */
export const INDEX_PROJECTIONS = {
  [LedgerIndexes.byApprovalId]: ['runId', 'turn', 'call', 'budget'],
  [LedgerIndexes.pendingApprovals]: [
    'kind', 'approvalId', 'runId', 'agent', 'turn', 'call', 'toolName', 'summary', 'amount', 'details',
    'status', 'createdAt', 'reason', 'decidedBy', 'decidedAt', 'budget',
  ],
} as const satisfies Record<string, readonly (keyof ApprovalRecord)[]>;

/**
 * The run indexes (running runs, runs by agent) project only the run id: their readers read each
 * run itself, and a run item changes at every step (a fuller copy would be rewritten with it).
 */
export const RUN_INDEX_PROJECTION = ['runId'] as const;

/**
 * The partitions of every item but the task tokens (`TOKEN#<runId>`, lambdas/records/ledger-records.ts
 * tokenKey): runs and their conversations, the kill flag, the breakers, large values by reference,
 * the effects claimed across runs by a business key (EFFECT#<agent>:<tool>:<key>), the amounts
 * reserved across runs per key (AGG#<agent>:<tool>:<key>), a fleet budget's day counters (the
 * agent's FLEET#<agent>:<day>, the stack's STACKFLEET#<stack>:<day>: lambdas/records/fleet.ts).
 * Every role but the approval functions' is held to them by a `dynamodb:LeadingKeys` condition on
 * its table statement, so only RequestApproval, the approval API and the expiry sweep can read a
 * token. (A token is a whole item of its own: a condition on attributes would not do, since the
 * sealed records are written as whole items.)
 */
export const NON_TOKEN_PARTITIONS = ['RUN#*', 'GLOBAL', 'BREAKER#*', 'BLOB#*', 'EFFECT#*', 'AGG#*', 'FLEET#*', 'STACKFLEET#*'] as const;

/**
 * The partitions of one agent's roles: its business-key effects, aggregates and fleet-budget
 * counters are named for it (`EFFECT#<agent>:…`, `AGG#<agent>:…`: lambdas/tools/effects.ts;
 * `FLEET#<agent>:…`: lambdas/records/fleet.ts), so an agent's functions cannot read or claim
 * another agent's, though they share the table (issue 34); the stack's fleet counters are the
 * stack's (`STACKFLEET#<stack>:…`), which all its agents lease from. With `tokens`, the task
 * tokens' partitions too (the approval functions). No agent: every agent's (the stack's shared functions).
 */
export function partitionsOf(agent: string | undefined, tokens = false, stack = '*'): string[] {
  const named = (partition: (typeof NON_TOKEN_PARTITIONS)[number]) => `${partition.slice(0, -1)}${partition === 'STACKFLEET#*' ? stack : agent}:*`;
  const own = NON_TOKEN_PARTITIONS.map((partition) => (agent !== undefined && (partition === 'EFFECT#*' || partition === 'AGG#*' || partition === 'FLEET#*' || partition === 'STACKFLEET#*') ? named(partition) : partition));
  return tokens ? [...own, 'TOKEN#*'] : own;
}

/**
 * Who may do what on the ledger, by role (the ledger methods each role's steps call). No function's
 * role may delete an item (records expire by TTL; an operator prunes: `grantPrune`), and none may scan: the sweeper queries the sparse
 * `runningRuns` index. (`savepoint runs` lists all runs with a paged scan under the operator's own
 * credentials, not a function's role.) An update is a read of the sealed item and a conditional
 * put of the whole new one (lambdas/ledger/seal.ts), so updaters have GetItem and PutItem, not
 * UpdateItem. `tokens: true` marks the approval functions, the only roles whose table statement
 * lets in the task tokens' partitions (`TOKEN#*`) besides NON_TOKEN_PARTITIONS (they read and write
 * task tokens). Every role's table statement carries a `dynamodb:LeadingKeys` condition.
 */
export const LEDGER_ACCESS = {
  /**
   * StartRun: createRun, getRun, attachExecution; resuming a run reads its conversation (a query: the twin refused it without).
   * A new run's put is a TransactWriteItems with a ConditionCheck that its id was not pruned (lambdas/ledger/pruning.ts
   * `prunedRunKey`): that check, and its read when the put fails, on those items alone (`prunedRuns`).
   */
  startRun: { table: ['GetItem', 'PutItem', 'Query'], prunedRuns: ['GetItem', 'ConditionCheckItem'] },
  /** BudgetCheck (an execution's first decision in the definitions before 0.8.0, whose executions still invoke it): reads the run, the conversation, the kill flag (one batched read), a budget approval; records guard events and applies an approved extension. */
  budgetCheck: { table: ['GetItem', 'BatchGetItem', 'Query', 'PutItem'] },
  /**
   * CallModel: reads the run, the conversation and the breaker (one batched read), decides (a budget approval read, guard events recorded, an approved extension
   * applied), reserves the call's cost, records the turn once with its count (one
   * TransactWriteItems of two Puts: PutItem authorizes each) — a final answer's with the kill flag
   * checked (ConditionCheckItem), so that the decision after it needs no read; the model breaker.
   */
  callModel: { table: ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'ConditionCheckItem'] },
  /** Compact: like CallModel, for the summary turn. */
  compact: { table: ['GetItem', 'BatchGetItem', 'Query', 'PutItem'] },
  /** Handoff: records the successor in the run's execution chain. */
  handoff: { table: ['GetItem', 'PutItem'] },
  /**
   * CallTool: one batched read, then claims, completes and releases the call (or records a read at
   * once), counts it, escalates a timed-out approval; the tools breaker. A tool with an approval
   * rule reads the run's calls before it (a query of the conversation) when its function's cache
   * does not hold them — a cold function always — so it queries too (the twin refused it). A call,
   * its business-key effect and the run item that counts it are written in one TransactWriteItems,
   * which IAM authorizes action by action: PutItem for each Put, ConditionCheckItem for an item only checked
   * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis-iam.html).
   * A result stored by reference is put in chunks under the run (BLOB#), and under the effect it
   * completes (EFFECT#<agent>:…, beside its record, which a prune keeps); a later run of the key queries them there.
   * A write handed its turn's state (lambdas/steps/handed-step.ts) reads nothing: its claim is put
   * with the run item and the global kill item ConditionChecked (test/engine/handed-calls.test.ts
   * fails without ConditionCheckItem).
   */
  callTool: { table: ['GetItem', 'BatchGetItem', 'Query', 'PutItem', 'ConditionCheckItem'] },
  /**
   * RequestApproval: creates the approval (or refreshes its task token), leading or following the
   * request its effect's calls share across runs (the EFFECT# partition's APPROVAL item, and the
   * leader's approval: GetItem, PutItem). Like CallTool, it reads
   * the run's earlier calls for the tool's approval rule (a query of the conversation) when its
   * function's cache does not hold them, as a cold function's never does (the twin refused it).
   */
  requestApproval: { table: ['GetItem', 'BatchGetItem', 'PutItem', 'Query'], tokens: true },
  /**
   * Finalize / RecordFailure: finishRun, with the agent's report of the run (`report`), made from
   * its conversation (a query, and the results stored by reference: queries of their chunks); a
   * run that ends with a turn open has that turn's calls counted (a query: lambdas/ledger/open-turn.ts).
   */
  finalize: { table: ['GetItem', 'PutItem', 'Query'] },
  /**
   * The approval API: finds an approval by its id, lists the pending ones, decides once, and wakes
   * the other runs' calls that share it (reads the effect's APPROVAL item and theirs: GetItem); its
   * page shows the evidence (the run's conversation, and tool results stored by reference: queries).
   */
  approvalCallback: { table: ['GetItem', 'Query', 'PutItem'], indexes: { [LedgerIndexes.byApprovalId]: ['Query'], [LedgerIndexes.pendingApprovals]: ['Query'] }, tokens: true },
  /**
   * The expiry sweep: lists pending approvals, decides them expired (waking the calls that share
   * one, as the approval API does), and counts each one's wait on
   * its run: only the part the turn's other approvals do not already cover (approvals/decision.ts
   * countWait reads them: a query of the run's conversation).
   */
  expireApprovals: { table: ['GetItem', 'PutItem', 'Query'], indexes: { [LedgerIndexes.pendingApprovals]: ['Query'] }, tokens: true },
  /**
   * ExecutionStopped: marks the run killed and closes its pending approvals, which it finds in the
   * pendingApprovals index (a query: the twin refused it without, and the approvals stayed pending);
   * finds a killed run's child runs in its conversation (a query of the run's partition) to kill them too;
   * and, when a child run ends, settles its reservation in its parent's run item, and up the tree,
   * each child's own run item closed first (a read and a conditional put of each run item:
   * lambdas/tools/child-runs.ts `settleUp`; CallTool does the same for its own child, on its grant).
   */
  executionStopped: { table: ['GetItem', 'PutItem', 'Query'], indexes: { [LedgerIndexes.pendingApprovals]: ['Query'] } },
  /**
   * The runs API: reads a run (a fork's parent too) with its conversation and results stored by
   * reference (queries), lists its agent's runs (a query of the runsByAgent index, newest first: no
   * scan, which IAM could not keep off the task tokens' partition) and the pending approvals
   * (lifecycle `input_required`), and records a cancel's kill on the run item. A start under a run
   * id the ledger does not hold reads whether that id was pruned (`prunedRuns`), refused before it starts.
   * It reads and writes runs' partitions and their blobs' only: no effect, aggregate, fleet counter,
   * breaker or kill switch (it serves every agent of the stack, so those would be every agent's).
   */
  runsApi: { table: ['GetItem', 'Query', 'PutItem'], partitions: ['RUN#*', 'BLOB#*'], prunedRuns: ['GetItem'], indexes: { [LedgerIndexes.pendingApprovals]: ['Query'], [LedgerIndexes.runsByAgent]: ['Query'] } },
  /**
   * The run's event stream (`GET /runs/{runId}/events`, lambdas/adapters/run-events-lambda.ts):
   * reads the run item and queries its conversation, and the results stored by reference (their
   * chunks); no write, and no partition but a run's and its blobs' (no effect, aggregate, breaker).
   */
  runEvents: { table: ['GetItem', 'Query'], partitions: ['RUN#*', 'BLOB#*'] },
  /**
   * RecoverRun: reads the run, records a recovery, or gives the run up — finishRun, which counts the
   * calls of a turn left open (a query of that turn's part of the run's partition: lambdas/ledger/open-turn.ts).
   */
  recoverRun: { table: ['GetItem', 'PutItem', 'Query'] },
  /** The sweeper: lists the running runs (a query of their sparse index), recovers like RecoverRun (its query of an open turn too), lists pending approvals. */
  sweep: { table: ['GetItem', 'PutItem', 'Query'], indexes: { [LedgerIndexes.pendingApprovals]: ['Query'], [LedgerIndexes.runningRuns]: ['Query'] } },
  /**
   * With tracing on, beside the role of each function that ends a run (finishRun): the run's
   * conversation read once at its end, for the spans of its budget checks (lambdas/telemetry/spans.ts).
   */
  traceRunEnd: { table: ['Query'] },
} as const satisfies Record<string, LedgerRoleAccess>;

/** The partitions of the items that say a run id was pruned (lambdas/ledger/pruning.ts `prunedRunKey`): a prune puts them, StartRun checks them. */
export const PRUNED_RUN_PARTITIONS = 'PRUNEDRUN#*';

/**
 * The grant of `savepoint prune` (`LedgerTable.grantPrune`): it scans the run records, lists the
 * pending approvals, reads each chosen run's partitions and the prune records, puts a prune record
 * and the items that say each run's id was pruned, and deletes a run's items — in its own partitions only (records.ts, protocol.ts `runPartitions`).
 */
export const PRUNE_ACCESS = {
  read: ['Scan', 'Query', 'GetItem', 'BatchGetItem'],
  readPartitions: ['RUN#*', 'BLOB#*', 'PRUNED'],
  put: ['PutItem'],
  putPartitions: ['PRUNED', PRUNED_RUN_PARTITIONS],
  delete: ['DeleteItem', 'BatchWriteItem'],
  deletePartitions: ['RUN#*', 'TOKEN#*', 'BLOB#*'],
  indexes: ['Query'],
} as const;

/**
 * The grant of `savepoint effects` (`LedgerTable.grantEffects`): it scans for the business-key
 * effects, reads each, and puts an escalated one settled (protocol.ts `resolveEffect`) — in the
 * effects' own partitions only.
 */
export const EFFECTS_ACCESS = {
  read: ['Scan', 'GetItem'],
  put: ['PutItem'],
  partitions: ['EFFECT#*'],
} as const;

interface LedgerRoleAccess {
  table: readonly string[];
  /** What it may do, besides, to the items that say a run id was pruned (PRUNED_RUN_PARTITIONS), in a statement of their own. */
  prunedRuns?: readonly string[];
  /** The partitions its table statement is held to, when fewer than every non-token one (`partitionsOf`). */
  partitions?: readonly string[];
  indexes?: Partial<Record<string, readonly string[]>>;
  tokens?: true;
}

export type LedgerRole = keyof typeof LEDGER_ACCESS;

/** The ledger's table and its seal key share one removal policy: neither goes without the other. */
const LEDGER_REMOVAL_POLICY = RemovalPolicy.RETAIN;

/**
 * The ledger: one on-demand table with point-in-time recovery and a TTL attribute, plus the two
 * sparse indexes approvals need (by opaque id, and pending by deadline) and the sparse index of
 * running runs the sweeper queries.
 */
export class LedgerTable extends Construct {
  /** The DynamoDB table. */
  readonly table: TableV2;
  /** The key every record is sealed with (lambdas/ledger/seal.ts): read by each function that uses the ledger, and by `savepoint verify`. */
  readonly sealKey: Secret;

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.table = new TableV2(this, 'Table', {
      partitionKey: { name: 'pk', type: AttributeType.STRING },
      sortKey: { name: 'sk', type: AttributeType.STRING },
      billing: Billing.onDemand(),
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      timeToLiveAttribute: 'expiresAt',
      deletionProtection: true,
      removalPolicy: LEDGER_REMOVAL_POLICY,
      globalSecondaryIndexes: [
        {
          indexName: LedgerIndexes.byApprovalId,
          partitionKey: { name: 'approvalId', type: AttributeType.STRING },
          projectionType: ProjectionType.INCLUDE,
          nonKeyAttributes: [...INDEX_PROJECTIONS[LedgerIndexes.byApprovalId]],
        },
        {
          indexName: LedgerIndexes.pendingApprovals,
          partitionKey: { name: 'pendingApproval', type: AttributeType.STRING },
          sortKey: { name: 'decideBy', type: AttributeType.STRING },
          projectionType: ProjectionType.INCLUDE,
          nonKeyAttributes: [...INDEX_PROJECTIONS[LedgerIndexes.pendingApprovals]],
        },
        {
          indexName: LedgerIndexes.runsByAgent,
          partitionKey: { name: 'runAgent', type: AttributeType.STRING },
          sortKey: { name: 'createdAt', type: AttributeType.STRING },
          projectionType: ProjectionType.INCLUDE,
          nonKeyAttributes: [...RUN_INDEX_PROJECTION],
        },
        {
          indexName: LedgerIndexes.runningRuns,
          partitionKey: { name: 'runningRun', type: AttributeType.STRING },
          sortKey: { name: 'createdAt', type: AttributeType.STRING },
          projectionType: ProjectionType.INCLUDE,
          nonKeyAttributes: [...RUN_INDEX_PROJECTION],
        },
      ],
    });
    this.sealKey = new Secret(this, 'SealKey', {
      description: 'HMAC key the ledger records are sealed with',
      generateSecretString: { passwordLength: 64, excludePunctuation: true },
      // The records outlive the stack (the table is retained): so does the key that verifies them.
      removalPolicy: LEDGER_REMOVAL_POLICY,
    });
    // Only the functions that use the ledger and the principals given `grantVerify`/`grantPrune`/`grantEffects` read it (infra/keys.ts).
    onlyReaders(this.sealKey, () => [...this.#sealReaders]);
  }

  /**
   * The role and user ARNs (or ARN patterns) that may read the seal key: its resource policy denies
   * every other principal. The roles of the step functions that use this ledger are one pattern,
   * the IAM path they are put under (`/savepoint/<stack>/<ledger>/`), not an ARN each: a secret's
   * resource policy holds at most SECRET_RESOURCE_POLICY_MAX_CHARS, which one ARN per role of each
   * agent filled at about 17 agents. IAM paths are the account's, not the region's: a stack of the
   * same name in another region puts its roles under the same path, past this Deny only — their
   * own policies grant them nothing here.
   */
  readonly #sealReaders = new Set<string>();
  #functionRoles?: { path: string; pattern: string };

  /** Lets `grantee` read the seal key: its identity policy, and its ARN (or its path) among the readers the secret's resource policy lets through. */
  #grantSealRead(grantee: IGrantable, what: string): void {
    this.sealKey.grantRead(grantee);
    if (grantee instanceof StepFunction && grantee.role instanceof InlinePolicyRole) {
      this.#functionRoles ??= this.#rolePath();
      grantee.role.placeUnder(this.#functionRoles.path);
      this.#sealReaders.add(this.#functionRoles.pattern);
      return;
    }
    for (const arn of principalArns(grantee.grantPrincipal, what)) this.#sealReaders.add(arn);
  }

  /** The path of the roles of this ledger's step functions, and the ARN pattern of every role under it. */
  #rolePath(): { path: string; pattern: string } {
    const stackName = topLevelStack(this).stackName;
    if (Token.isUnresolved(stackName)) throw new Error(`${this.node.path}: the ledger's functions' roles are put under a path named after the stack, whose name must be known at synth (got a token)`);
    // The ledger's construct path under the stack (`Ledger`, `Agent1-Ledger`): one path per ledger of the stack.
    const ledger = this.node.scopes.slice(this.node.scopes.indexOf(topLevelStack(this)) + 1).map((scope) => scope.node.id.replace(/[^\w+=,.@-]/g, '')).join('-');
    const path = `/savepoint/${stackName}/${ledger}/`;
    return { path, pattern: Stack.of(this).formatArn({ service: 'iam', region: '', resource: 'role', resourceName: `${path.slice(1)}*` }) };
  }

  /**
   * What `savepoint verify --stack` needs: the seal key (an operator's role or user; the secret's
   * resource policy refuses anyone not granted here, administrators included).
   */
  grantVerify(grantee: IGrantable): void {
    this.#grantSealRead(grantee, 'LedgerTable.grantVerify');
  }

  /**
   * Grants `fn` what its role does on the ledger (and no more) and tells it where the ledger is,
   * in one call; given the `agent` whose function it is, only that agent's business-key effects
   * and aggregates among the shared partitions (`partitionsOf`).
   */
  grantTo(fn: IFunction, role: LedgerRole, agent?: string): void {
    this.grantRole(fn, role, agent);
    // Every record read is verified and every record written is sealed: no ledger role without the key.
    this.#grantSealRead(fn, 'LedgerTable.grantTo');
    if (fn instanceof LambdaFunction) {
      fn.addEnvironment('TABLE_NAME', this.table.tableName);
      fn.addEnvironment('LEDGER_SEAL_SECRET_ARN', this.sealKey.secretArn);
    }
  }

  /**
   * What `savepoint prune --stack` needs (lambdas/ledger/dynamodb-ledger.ts `prune`), for whoever
   * runs it — an operator's role, user or group: e.g. `agent.ledger.grantPrune(operators)`. Reads
   * of the runs and their prune records, the put of a prune record, and deletes held by
   * `dynamodb:LeadingKeys` to a run's own partitions (PRUNE_ACCESS): a prune can never delete a
   * business-key effect, which guards exactly-once across runs (it deletes task tokens by key). Its
   * `Scan` is not held so: a Scan names no partition, and `ForAllValues` holds when the request has
   * no `dynamodb:LeadingKeys` value (IAM's multivalued condition keys), so the grantee can read any
   * item of the table by scanning it, task tokens included: grant it to those you let read the ledger. BatchWriteItem is authorized as itself, each key's partition a LeadingKeys value
   * (https://docs.aws.amazon.com/service-authorization/latest/reference/list_amazondynamodb.html).
   */
  grantPrune(grantee: IGrantable): void {
    const onPartitions = (actions: readonly string[], partitions: readonly string[]) =>
      new PolicyStatement({
        actions: actions.map((action) => `dynamodb:${action}`),
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...partitions] } },
      });
    grantee.grantPrincipal.addToPrincipalPolicy(onPartitions(PRUNE_ACCESS.read, PRUNE_ACCESS.readPartitions));
    grantee.grantPrincipal.addToPrincipalPolicy(onPartitions(PRUNE_ACCESS.put, PRUNE_ACCESS.putPartitions));
    grantee.grantPrincipal.addToPrincipalPolicy(onPartitions(PRUNE_ACCESS.delete, PRUNE_ACCESS.deletePartitions));
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({ actions: PRUNE_ACCESS.indexes.map((action) => `dynamodb:${action}`), resources: [`${this.table.tableArn}/index/${LedgerIndexes.pendingApprovals}`] }),
    );
    this.#grantSealRead(grantee, 'LedgerTable.grantPrune');
  }

  /**
   * What `savepoint effects --stack` (and `effects resolve`) needs, for whoever settles an
   * escalated effect — an operator's role, user or group: e.g. `agent.ledger.grantEffects(operators)`.
   * Reads and conditional puts held by `dynamodb:LeadingKeys` to the effects' partitions
   * (EFFECTS_ACCESS): it writes nothing else. The `Scan` that finds the effects is not held so: a Scan
   * names no partition, and `ForAllValues` holds when the request has no `dynamodb:LeadingKeys` value
   * (IAM's multivalued condition keys), so the grantee can read any item of the table by scanning it,
   * run records and task tokens included: grant it to those you let read the ledger. No function of
   * the stack needs it: only a person settles an effect.
   */
  grantEffects(grantee: IGrantable): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: [...EFFECTS_ACCESS.read, ...EFFECTS_ACCESS.put].map((action) => `dynamodb:${action}`),
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [...EFFECTS_ACCESS.partitions] } },
      }),
    );
    this.#grantSealRead(grantee, 'LedgerTable.grantEffects');
  }

  /**
   * The waits of a parent's tool calls for their child runs (`WAIT#<runId>`, lambdas/records
   * childWaitKey): CallTool stores a wait's task token (`put`), ExecutionStopped reads it when a
   * child's execution ends. No other role reaches them, as no other reaches an approval's token.
   */
  grantChildWaits(grantee: IGrantable, access: 'put' | 'read'): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: access === 'put' ? ['dynamodb:PutItem', 'dynamodb:GetItem'] : ['dynamodb:GetItem'],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['WAIT#*'] } },
      }),
    );
  }

  /**
   * Which run an execution drives, where its input does not say (`EXEC#<execution ARN>`, lambdas/records
   * executionRunKey): StartRun notes it (`put`), the stack's shared RecoverRun and ExecutionStopped
   * read it (`read`) to find the run of an execution that ended without the agent's code.
   */
  grantExecutionRuns(grantee: IGrantable, access: 'put' | 'read'): void {
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: access === 'put' ? ['dynamodb:PutItem'] : ['dynamodb:GetItem'],
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['EXEC#*'] } },
      }),
    );
  }

  /**
   * Grants `grantee` exactly what one ledger role needs (its actions, conditions and the seal key):
   * of `agent`'s, when given, its own effects and aggregates only (`partitionsOf`).
   */
  grantRole(grantee: IGrantable, role: LedgerRole, agent?: string): void {
    const access: LedgerRoleAccess = LEDGER_ACCESS[role];
    // Every key a request names (each of a batch's, a query's partition) must match: no token read
    // but by the approval functions, and no other agent's effect. An approval function of no agent
    // (the stack's approval callback and expiry sweep) reaches every agent's partitions and the
    // tokens', and no more: not a child run's wait (WAIT#, its token), which execution runs
    // (EXEC#), nor the prune records (PRUNED, PRUNEDRUN#).
    const stack = topLevelStack(this).stackName;
    const partitions = access.partitions ? [...access.partitions] : partitionsOf(agent, access.tokens === true, stack);
    grantee.grantPrincipal.addToPrincipalPolicy(
      new PolicyStatement({
        actions: access.table.map((action) => `dynamodb:${action}`),
        resources: [this.table.tableArn],
        conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': partitions } },
      }),
    );
    if (access.prunedRuns) {
      grantee.grantPrincipal.addToPrincipalPolicy(
        new PolicyStatement({
          actions: access.prunedRuns.map((action) => `dynamodb:${action}`),
          resources: [this.table.tableArn],
          conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [PRUNED_RUN_PARTITIONS] } },
        }),
      );
    }
    // No condition on the index statements: an index query's leading key is the index's partition
    // key (an approval id, the pending or running marker), not `pk`; and no index projects a token.
    for (const [index, actions] of Object.entries(access.indexes ?? {})) {
      grantee.grantPrincipal.addToPrincipalPolicy(
        new PolicyStatement({ actions: actions!.map((action) => `dynamodb:${action}`), resources: [`${this.table.tableArn}/index/${index}`] }),
      );
    }
  }
}
