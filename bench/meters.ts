/**
 * Meters for what AWS would bill, read from outside the pipeline (no hook in the harness):
 *   - `lambdaMeter`: each Task's handler time, from the engine's history events as they happen
 *     (TaskStarted → TaskSucceeded / TaskFailed / TaskSubmitted), rounded up to 1 ms per invocation
 *     as Lambda bills it, times the function's memory from the synthesized template;
 *   - `dynamoMeter`: every request the DynamoDB emulator (dynalite, on loopback in this process)
 *     serves, seen through Node's `http.server.request.start` diagnostics channel, with the read and
 *     write request units DynamoDB's sizing rules charge for it.
 * Both measure the local twin: handler times here exclude the network and the model's latency,
 * which on AWS are billed too (bench/aws-cost.ts prices a second of waiting on its own).
 */
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { extractStateMachine, type CfnTemplateJson } from '../local/template/asl.js';
import type { LocalEngine } from '../local/engine/local-engine.js';

// ---- Lambda --------------------------------------------------------------------------------------

/** Memory (MB) of each Task state's function, from the template (`SAVEPOINT_STEP` names a function's step). */
export function memoryByState(template: CfnTemplateJson): Record<string, number> {
  const byStep = new Map<string, number>();
  for (const resource of Object.values(template.Resources ?? {}) as { Type: string; Properties?: Record<string, any> }[]) {
    const step = resource.Properties?.['Environment']?.Variables?.SAVEPOINT_STEP;
    if (resource.Type === 'AWS::Lambda::Function' && typeof step === 'string') byStep.set(step, Number(resource.Properties?.['MemorySize'] ?? 128));
  }
  const tasks = extractStateMachine(template).tasks;
  return Object.fromEntries(Object.entries(tasks).map(([state, task]) => {
    const memory = byStep.get(task.step);
    if (memory === undefined) throw new Error(`no function in the template runs step ${task.step} (Task state ${state})`);
    return [state, memory];
  }));
}

export interface LambdaUsage {
  invocations: number;
  /** Σ of each invocation's duration rounded up to a whole millisecond. */
  billedMs: number;
  gbSeconds: number;
}

/**
 * Handler time of every Task the engine runs, per execution as one total; `reset` between runs.
 * @param now the clock durations are read on (the fleet benchmark's is simulated) @default performance.now
 */
export function lambdaMeter(engine: Pick<LocalEngine, 'on'>, memory: Record<string, number>, now: () => number = () => performance.now()) {
  let usage: LambdaUsage = { invocations: 0, billedMs: 0, gbSeconds: 0 };
  // Per execution, each event's state and, for a started Task, when it started: a Task event links
  // back (previousEventId) to its own state's, since a turn's tool calls run side by side (the
  // ToolCalls Map), so the state last entered need not be the Task's.
  const executions = new Map<string, Map<number, { state: string; startedAt?: number }>>();
  const off = engine.on((event) => {
    const at = now();
    let events = executions.get(event.executionArn);
    if (!events) executions.set(event.executionArn, (events = new Map()));
    const state = event.stateEnteredEventDetails?.name ?? events.get(event.previousEventId)?.state;
    if (event.type.startsWith('Execution') && event.type !== 'ExecutionStarted') executions.delete(event.executionArn);
    if (state === undefined) return;
    const linked = events.get(event.previousEventId);
    events.set(event.id, { state, ...(event.type === 'TaskStarted' && { startedAt: at }) });
    if ((event.type === 'TaskSucceeded' || event.type === 'TaskFailed' || event.type === 'TaskSubmitted' || event.type === 'TaskTimedOut') && linked?.startedAt !== undefined) {
      const billedMs = Math.max(1, Math.ceil(at - linked.startedAt));
      usage.invocations += 1;
      usage.billedMs += billedMs;
      usage.gbSeconds += (billedMs / 1000) * ((memory[state] ?? 128) / 1024);
    }
  });
  return {
    usage: () => ({ ...usage }),
    reset: () => void (usage = { invocations: 0, billedMs: 0, gbSeconds: 0 }),
    close: off,
  };
}

// ---- DynamoDB ------------------------------------------------------------------------------------

type AttributeValue = Record<string, unknown>;
type Item = Record<string, AttributeValue>;
type Index = NonNullable<CreateTableCommandInput['GlobalSecondaryIndexes']>[number];

// dynalite's own item sizing (DynamoDB's rules: attribute names + values), the emulator that serves the requests.
const { itemSize } = createRequire(import.meta.url)('dynalite/db/index.js') as { itemSize: (item: Item) => number };

export interface DynamoUsage {
  requests: number;
  byOperation: Record<string, number>;
  readUnits: number;
  /** The part of `readUnits` spent on keys that were not there (each read at the minimum). */
  absentReadUnits: number;
  /** The largest item read or written: items over 4 KB (reads) or 1 KB (writes) cost more than one unit. */
  largestItemBytes: number;
  /** Table writes and the index writes they cause. */
  writeUnits: number;
  indexWriteUnits: number;
  /** Requests of an operation this meter does not price (counted, not billed: the check refuses them). */
  unmetered: number;
}

const TARGET = 'DynamoDB_20120810.';
const readUnits = (bytes: number, consistent: boolean) => Math.max(1, Math.ceil(bytes / 4096)) / (consistent ? 1 : 2);
const writeUnits = (bytes: number) => Math.max(1, Math.ceil(bytes / 1024));

/**
 * DynamoDB requests and request units, from the requests the emulator in this process serves.
 * Reads: each item returned (GetItem, BatchGetItem) rounded up to 4 KB, a key not found at the
 * minimum; a Query or Scan its items' total; eventually consistent reads at half. Writes: PutItem
 * at the larger of the old and the new item, rounded up to 1 KB (a failed condition charges the
 * same), plus one write per global secondary index whose entry the put creates, changes or
 * deletes (two when its key changes). The old items are those this meter saw written.
 */
export function dynamoMeter(table: Pick<CreateTableCommandInput, 'KeySchema' | 'GlobalSecondaryIndexes'>) {
  const tableKeys = (table.KeySchema ?? []).map((key) => key.AttributeName!);
  const indexes = table.GlobalSecondaryIndexes ?? [];
  let usage = empty();
  const items = new Map<string, Item>();
  const onRequest = (message: unknown) => {
    const { request, response } = message as { request: IncomingMessage; response: ServerResponse };
    const target = request.headers['x-amz-target'];
    if (typeof target !== 'string' || !target.startsWith(TARGET)) return;
    const operation = target.slice(TARGET.length);
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    const end = response.end.bind(response) as (...args: unknown[]) => ServerResponse;
    response.end = ((...args: unknown[]) => {
      try {
        meter(operation, JSON.parse(body || '{}'), response.statusCode, typeof args[0] === 'string' ? args[0] : String(args[0] ?? ''));
      } catch {
        usage.unmetered += 1; // a body this meter cannot read: counted, never guessed
      }
      return end(...args);
    }) as ServerResponse['end'];
  };

  function meter(operation: string, input: any, status: number, text: string) {
    usage.requests += 1;
    usage.byOperation[operation] = (usage.byOperation[operation] ?? 0) + 1;
    const output = text ? JSON.parse(text) : {};
    const failedCondition = status !== 200 && /(ConditionalCheckFailed|TransactionCanceled)Exception$/.test(String(output.__type ?? ''));
    if (status !== 200 && !failedCondition) return; // refused before any work (validation, throttling): not billed
    const consistent = input.ConsistentRead === true;
    switch (operation) {
      case 'GetItem':
        if (output.Item) read(output.Item, consistent);
        else absent(1, consistent);
        return;
      case 'BatchGetItem':
        for (const [table, request] of Object.entries<any>(input.RequestItems ?? {})) {
          const found: Item[] = output.Responses?.[table] ?? [];
          const unprocessed = output.UnprocessedKeys?.[table]?.Keys?.length ?? 0;
          for (const item of found) read(item, request.ConsistentRead === true);
          absent(request.Keys.length - found.length - unprocessed, request.ConsistentRead === true);
        }
        return;
      case 'Query':
      case 'Scan':
        usage.readUnits += readUnits(((output.Items ?? []) as Item[]).reduce((sum, item) => sum + itemSize(item), 0), consistent);
        return;
      case 'PutItem': {
        const key = JSON.stringify([input.TableName, ...tableKeys.map((name) => input.Item[name])]);
        const old = items.get(key);
        usage.largestItemBytes = Math.max(usage.largestItemBytes, itemSize(input.Item));
        usage.writeUnits += writeUnits(Math.max(itemSize(input.Item), old ? itemSize(old) : 0));
        if (failedCondition) return;
        const indexUnits = indexes.reduce((sum, index) => sum + indexWrites(index, tableKeys, old, input.Item), 0);
        usage.indexWriteUnits += indexUnits;
        usage.writeUnits += indexUnits;
        items.set(key, input.Item);
        return;
      }
      case 'TransactWriteItems':
        // A transactional write costs twice a plain one per item, a ConditionCheck as a write of the
        // item it checks (DynamoDB pricing, "read and write requests": transactional requests).
        for (const action of input.TransactItems ?? []) {
          if (action.Put) {
            const key = JSON.stringify([action.Put.TableName, ...tableKeys.map((name) => action.Put.Item[name])]);
            const old = items.get(key);
            usage.largestItemBytes = Math.max(usage.largestItemBytes, itemSize(action.Put.Item));
            usage.writeUnits += 2 * writeUnits(Math.max(itemSize(action.Put.Item), old ? itemSize(old) : 0));
            if (failedCondition) continue;
            const indexUnits = 2 * indexes.reduce((sum, index) => sum + indexWrites(index, tableKeys, old, action.Put.Item), 0);
            usage.indexWriteUnits += indexUnits;
            usage.writeUnits += indexUnits;
            items.set(key, action.Put.Item);
          } else if (action.ConditionCheck) {
            const old = items.get(JSON.stringify([action.ConditionCheck.TableName, ...tableKeys.map((name) => action.ConditionCheck.Key[name])]));
            usage.writeUnits += 2 * writeUnits(old ? itemSize(old) : 0);
          } else usage.unmetered += 1;
        }
        return;
      default:
        usage.unmetered += 1;
    }
  }

  function read(item: Item, consistent: boolean) {
    const bytes = itemSize(item);
    usage.largestItemBytes = Math.max(usage.largestItemBytes, bytes);
    usage.readUnits += readUnits(bytes, consistent);
  }
  function absent(keys: number, consistent: boolean) {
    usage.readUnits += keys * readUnits(0, consistent);
    usage.absentReadUnits += keys * readUnits(0, consistent);
  }

  subscribe('http.server.request.start', onRequest);
  return {
    usage: (): DynamoUsage => ({ ...usage, byOperation: { ...usage.byOperation } }),
    reset: () => void (usage = empty()),
    close: () => void unsubscribe('http.server.request.start', onRequest),
  };
}

function empty(): DynamoUsage {
  return { requests: 0, byOperation: {}, readUnits: 0, absentReadUnits: 0, largestItemBytes: 0, writeUnits: 0, indexWriteUnits: 0, unmetered: 0 };
}

/** Writes to one index when a put replaces `old` with `next`: its entry created, changed or deleted. */
function indexWrites(index: Index, tableKeys: readonly string[], old: Item | undefined, next: Item): number {
  const entryOf = (item: Item | undefined) => (item ? indexEntry(index, tableKeys, item) : undefined);
  const [before, after] = [entryOf(old), entryOf(next)];
  if (!before && !after) return 0;
  if (!before) return writeUnits(itemSize(after!));
  if (!after) return writeUnits(itemSize(before));
  const keyNames = (index.KeySchema ?? []).map((key) => key.AttributeName!);
  const sameKey = keyNames.every((name) => JSON.stringify(before[name]) === JSON.stringify(after[name]));
  if (!sameKey) return writeUnits(itemSize(before)) + writeUnits(itemSize(after));
  return JSON.stringify(before) === JSON.stringify(after) ? 0 : writeUnits(itemSize(after));
}

/** The index's copy of an item (its keys, the table's keys, the projected attributes), or none when the item lacks an index key. */
function indexEntry(index: Index, tableKeys: readonly string[], item: Item): Item | undefined {
  const keyNames = (index.KeySchema ?? []).map((key) => key.AttributeName!);
  if (keyNames.some((name) => item[name] === undefined)) return undefined;
  const projection = index.Projection;
  const names =
    projection?.ProjectionType === 'ALL'
      ? Object.keys(item)
      : [...tableKeys, ...keyNames, ...(projection?.ProjectionType === 'INCLUDE' ? (projection.NonKeyAttributes ?? []) : [])];
  return Object.fromEntries(names.filter((name) => item[name] !== undefined).sort().map((name) => [name, item[name]!]));
}
