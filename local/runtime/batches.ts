/**
 * The twin's batch state machine: the definition infra/batch-state-machine.ts synthesizes, on an
 * engine of its own, its Tasks bound in process to the item step (lambdas/runs/batch.ts
 * `createBatchItem`). On AWS a batch's execution outlives any process; here it lives in this
 * one, so each batch's input is kept in the state directory (`batches/<batchId>.json`, written
 * before its execution starts) with its end (`<batchId>.end.json`): `resume` starts again every
 * batch a process that died left unfinished, and the runs API's idempotent start finds the runs
 * it had started, so none starts twice.
 *
 * A manifest's items are read by the Map itself (its ItemReader: local/aws/sfn-item-reader.ts) from
 * the twin's S3 (local/services/s3.ts), signed as the batch state machine's role, which the twin's
 * IAM decides by that role's policies in the batch template (local/template/batch.ts): the
 * twin's manifest bucket is granted, no other. Its other calls are authorized as that role too:
 * each Task's `lambda:InvokeFunction` on the item function the batch names (a refusal fails the
 * Task with Lambda.AWSLambdaException, as for the agent's state machine: local/engine/lambda-task.ts,
 * and so its item, and the Map Run with States.ExceedToleratedFailureThreshold:
 * local/aws/sfn-distributed-map.ts; the template allows the agent's own, `<agent>-batch-item` and
 * its versions), and each child
 * execution's `states:StartExecution` on the batch state machine (a refusal fails the batch with
 * States.Runtime, no item started: local/aws/sfn-distributed-map.ts). The Distributed Map's
 * DescribeExecution and StopExecution of its children are not calls the twin makes (its children
 * run in the parent's process, and stop with it).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { batchStates, BatchSources, type BatchExecutionInput, type BatchExecutionState, type BatchStore } from '../../lambdas/runs/batch.js';
import { LocalEngine, type EngineIam, type Timers } from '../engine/local-engine.js';
import { extractDefinition, walkStates, type CfnTemplateJson } from '../template/asl.js';
import { validatedDefinitions } from '../template/cache.js';
import { batchItemFunctionName, batchStateMachineName, deployBatchTemplate } from '../template/batch-deploy.js';
import { twinIam, type TwinIam } from '../aws/iam/index.js';
import { LOCAL_ACCOUNT, LOCAL_REGION } from '../aws/iam/deployment.js';
import type { AuthorizationRequest } from '../aws/iam/policy.js';
import type { LocalS3 } from '../services/s3.js';

export interface LocalBatchesOptions {
  agent: string;
  /**
   * The batch state machine's template (local/template/batch.ts `batchTemplate`), read when the first
   * batch starts: a checkout synthesizes it with the CDK, seconds that a run with no batch never pays.
   */
  template: () => Promise<CfnTemplateJson>;
  /** The twin's S3, where a manifest's items are read from. */
  s3: LocalS3;
  /** The item step: StartItemRun's and CheckItemRun's handler. */
  item: (event: unknown) => Promise<unknown>;
  /** Where batches are kept across restarts. @default memory */
  stateDir?: string;
  now?: () => Date;
  timers?: Timers;
  /** Ms instead of each item's poll wait (tests). @default the batch's pollSeconds */
  pollWaitMs?: number;
  /** Ms before each retry of an item's Task (local time runs compressed, as the agent's: LocalStackOptions.retryDelayMs). @default 20 */
  retryDelayMs?: number;
  log?: (line: string) => void;
}

export function localBatches(options: LocalBatchesOptions) {
  const dir = options.stateDir && join(options.stateDir, 'batches');
  if (dir) mkdirSync(dir, { recursive: true, mode: 0o700 });
  const memory = new Map<string, { batch: BatchExecutionInput; end?: BatchExecutionState }>();
  const invoke = { waitForTaskToken: false, invoke: (payload: unknown) => options.item(payload) };
  // Each source's Map binds the same item step, by state name (the Tasks name the function their input names).
  const sources = BatchSources.map(batchStates);
  let iam: TwinIam | undefined;
  // The ARN the deployed template's state machine resolves to (local/template/batch-deploy.ts), which its role's policies name.
  const stateMachineArn = `arn:aws:states:${LOCAL_REGION}:${LOCAL_ACCOUNT}:stateMachine:${batchStateMachineName(options.agent)}`;
  const made = (shared: CfnTemplateJson) => {
    // The batch state machine's role, as the twin's IAM knows it from the batch template deployed for this agent.
    const template = deployBatchTemplate(shared, options.agent);
    const twin = twinIam(template);
    iam = twin;
    const role = twin.roles.stateMachineRole;
    if (!role) throw new Error('the batch template has no state machine role');
    // Step Functions assumes it once per execution's calls, with a session name of its own: its S3 reads are signed with its key.
    const caller = { role, session: randomBytes(16).toString('hex') };
    const readObject = options.s3.objectReader(twin.credentials.of(role, caller.session));
    // Authorized here rather than by twin.engine: the item function is the agent stack's, not the batch template's.
    const engineIam: EngineIam = {
      authorizeInvoke: (functionArn) => twin.authorizer.authorize(caller, { action: 'lambda:InvokeFunction', resource: functionArn }),
      authorizeStartExecution: (stateMachineArn) => twin.authorizer.authorize(caller, { action: 'states:StartExecution', resource: stateMachineArn }),
      decisions: () => twin.authorizer.decisions(),
    };
    const definition = extractDefinition(template);
    // Each item Task's retries wait local, compressed time, as the agent's Tasks do (local/runtime/tasks.ts).
    const retryIntervalOverrides: Record<string, number[]> = {};
    walkStates(definition, (name, state) => {
      if (state.Type === 'Task' && Array.isArray(state['Retry'])) retryIntervalOverrides[name] = (state['Retry'] as unknown[]).map(() => options.retryDelayMs ?? 20);
    });
    return new LocalEngine({
      definition,
      stateMachineArn,
      iam: engineIam,
      retryIntervalOverrides,
      tasks: Object.fromEntries(sources.flatMap((names) => [[names.StartItemRun, invoke], [names.CheckItemRun, invoke]])),
      getObject: readObject.text,
      // Validated once per definition across processes, as the agent's engine (local/runtime/tasks.ts): each serve that resumes a batch paid ~150 ms for it.
      validated: validatedDefinitions(),
      ...(options.now && { now: options.now }),
      ...(options.timers && { timers: options.timers }),
      ...(options.pollWaitMs !== undefined && { waitTimeOverrides: Object.fromEntries(sources.map((names) => [names.WaitForItemRun, options.pollWaitMs!])) }),
    });
  };
  let engine: Promise<LocalEngine> | undefined;
  const engineOf = () => (engine ??= options.template().then(made));
  let closing = false;

  const file = (batchId: string, suffix = '') => join(dir!, `${batchId}${suffix}.json`);
  const write = (path: string, value: unknown) => {
    writeFileSync(`${path}.tmp`, JSON.stringify(value), { mode: 0o600 });
    renameSync(`${path}.tmp`, path);
  };
  const read = (batchId: string): { batch: BatchExecutionInput; end?: BatchExecutionState } | undefined => {
    if (!dir) return memory.get(batchId);
    if (!existsSync(file(batchId))) return undefined;
    const batch = JSON.parse(readFileSync(file(batchId), 'utf8')) as BatchExecutionInput;
    // Its end file: the status, and the error and cause a failed execution ended with (as DescribeExecution answers them on AWS).
    const end = existsSync(file(batchId, '.end')) ? (JSON.parse(readFileSync(file(batchId, '.end'), 'utf8')) as BatchExecutionState) : undefined;
    return { batch, ...(end !== undefined && { end: { status: end.status, ...(end.error !== undefined && { error: end.error }), ...(end.cause !== undefined && { cause: end.cause }) } }) };
  };

  const itemFunction = `arn:aws:lambda:${LOCAL_REGION}:${LOCAL_ACCOUNT}:function:${batchItemFunctionName(options.agent)}`;
  /** Runs the batch's execution and records its end (not the abort of a closing engine: that batch resumes). */
  const run = async (kept: BatchExecutionInput) => {
    const engine = await engineOf();
    if (closing) return;
    // A batch kept by 0.4.0 names no item function (its definition had the one it invoked).
    const batch = kept.itemFunction === undefined ? { ...kept, itemFunction } : kept;
    const { executionArn } = engine.startExecution({ name: batch.batchId, input: JSON.stringify(batch) });
    void engine.waitForExecution(executionArn).then((ended) => {
      if (closing || ended.status === 'ABORTED') return;
      const end: BatchExecutionState = { status: ended.status, ...(ended.error !== undefined && { error: ended.error }), ...(ended.cause !== undefined && { cause: ended.cause }) };
      if (dir) write(file(batch.batchId, '.end'), { ...end, at: (ended.stopDate ?? new Date()).toISOString() });
      else memory.set(batch.batchId, { batch, end });
      options.log?.(`batch ${batch.batchId}: ${ended.status.toLowerCase()}${ended.error ? ` (${ended.error}: ${ended.cause})` : ''}`);
    });
  };

  const store: BatchStore = {
    start: async (batch) => {
      const existing = read(batch.batchId);
      if (existing) return { created: false, batch: existing.batch, ...(existing.end ?? { status: 'RUNNING' }) };
      if (dir) write(file(batch.batchId), batch);
      else memory.set(batch.batchId, { batch });
      await run(batch);
      return { created: true, batch, status: 'RUNNING' };
    },
    get: async (batchId) => {
      const found = read(batchId);
      return found && { batch: found.batch, ...(found.end ?? { status: 'RUNNING' }) };
    },
  };

  return {
    store,
    /** The ARN its batches name as their item function (the twin binds the Tasks by state name; on AWS each agent's own). */
    itemFunction,
    /**
     * The twin's S3 decides a call by this: as the batch state machine's role when its key signed it
     * (that role's policies, from the batch template); any other signer is the administrator (the
     * person at the CLI, a test putting a manifest), as the twin's other endpoints treat them.
     */
    authorizeS3: (authorization: string | undefined, request: AuthorizationRequest) => {
      if (iam) iam.authorizer.authorize(iam.credentials.callerOf(authorization), request);
    },
    /** The batches' engine, made when the first batch starts (a test reads its executions). */
    engine: () => engineOf(),
    /** Starts again each kept batch that has not ended (a process that died left it); returns their ids. */
    resume: (): string[] => {
      if (!dir) return [];
      const unfinished = readdirSync(dir)
        .filter((name) => /^[A-Za-z0-9_-]+\.json$/.test(name) && !name.endsWith('.end.json'))
        .map((name) => name.slice(0, -'.json'.length))
        .filter((batchId) => !existsSync(file(batchId, '.end')));
      for (const batchId of unfinished) void run(read(batchId)!.batch);
      return unfinished;
    },
    close: async () => {
      closing = true;
      await (await engine)?.close();
    },
  };
}

export type LocalBatches = ReturnType<typeof localBatches>;
