import type { Key, Stored } from './protocol.js';

/**
 * A storage call as the engine is about to make it, in the terms of the table both engines keep:
 * the items a read or a put touches, the partition (or index) a query reads, a scan. What a guard
 * outside the ledger checks (`StorageLedger.guardStorage`; the local twin's IAM maps each to the
 * DynamoDB action it stands for), so that the embedded engine, which makes no DynamoDB call, is
 * held to the same grants as the DynamoDB one.
 */
export type StorageCall =
  | { readonly read: readonly Key[] }
  | { readonly put: readonly Key[]; /** The records put, where the call writes records (not a blob's chunks or a task token). */ readonly items?: readonly Stored[] }
  /** Items a multi-item write only checks, writing nothing to them (`putItems`: DynamoDB's ConditionCheck). */
  | { readonly check: readonly Key[] }
  | { readonly query: { readonly pk: string } | { readonly index: string; readonly partition: string } }
  | { readonly scan: true }
  /** Items a prune removes (`deleteItems`, pruning.ts): one BatchWriteItem of DeleteRequests with `batch`, else a conditional DeleteItem per key. */
  | { readonly delete: readonly Key[]; readonly batch?: true };

/** One item of a multi-item write (`putItems`): put `item`, or (without one) only check, if the item there is still `expected`. */
export type ItemWrite = { readonly key: Key; readonly item: Stored | undefined; readonly expected: Stored | undefined };
