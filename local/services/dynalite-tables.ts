/* eslint-disable @typescript-eslint/no-explicit-any -- dynalite's internals are untyped JavaScript */
import { deepFreeze } from '../../lambdas/shared/plain-copy.js';

type Callback = (error: unknown, table?: any) => void;

/**
 * dynalite keeps each table's description as JSON in its store and parses it again for every
 * request that touches the table — its BatchGetItem of n keys n + 1 times (the twin's, served beside
 * it, once a table: local/aws/dynamodb-batch-get.ts), the transactions served beside it
 * (local/aws/dynamodb-transactions.ts) once an action — about 3 KB for the ledger's table with its
 * indexes, ten times an agent step: a fifth of what dynalite did for the ledger's requests.
 *
 * Here the data plane's reads (`getTable` with its status check: GetItem, PutItem, Query, the
 * batches, the transactions), which only read the description, share one parsed and frozen copy
 * until the table is written again (created, updated, deleted: every write of dynalite's table
 * store drops it). What the control plane reads (DescribeTable, UpdateTable, DeleteTable, which
 * change the description they read) is still parsed afresh for each request, as before.
 */
export function sharingTableDescriptions(store: any): void {
  const { tableDb } = store;
  const getTable = store.getTable as (name: string, checkStatus: boolean | Callback, cb?: Callback) => void;
  const shared = new Map<string, object>();
  // Counts the table store's writes, begun and finished: a read that a write overlapped is not kept.
  let writes = 0;
  const written = (key: string) => {
    shared.delete(key);
    writes++;
  };
  for (const method of ['put', 'del'] as const) {
    const original = tableDb[method];
    tableDb[method] = (key: string, ...rest: unknown[]) => {
      written(key);
      const done = rest.at(-1);
      if (typeof done !== 'function') return original.call(tableDb, key, ...rest);
      return original.call(tableDb, key, ...rest.slice(0, -1), (...results: unknown[]) => {
        written(key);
        done(...results);
      });
    };
  }
  const batch = tableDb.batch;
  tableDb.batch = (operations: { key: string }[], done?: (...results: unknown[]) => void) => {
    for (const { key } of operations) written(key);
    return batch.call(tableDb, operations, (...results: unknown[]) => {
      for (const { key } of operations) written(key);
      done?.(...results);
    });
  };
  store.getTable = (name: string, checkStatus: boolean | Callback, cb?: Callback) => {
    // dynalite's own convention: a callback in second place means "with the status check".
    if (typeof checkStatus !== 'function') return getTable(name, checkStatus, cb);
    const known = shared.get(name);
    if (known) return void process.nextTick(checkStatus, null, known);
    const before = writes;
    getTable(name, (error, table) => {
      if (!error && writes === before) shared.set(name, deepFreeze(table));
      checkStatus(error, table);
    });
  };
}
