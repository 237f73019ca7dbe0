import { createRequire } from 'node:module';
import { DYNAMODB_PARTITION_KEY_MAX_BYTES, DYNAMODB_SORT_KEY_MAX_BYTES } from '../../lambdas/shared/limits.js';

/**
 * DynamoDB's key size limits, held on dynalite as DynamoDB holds them
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-partition-sort-keys):
 * a partition key value is at most 2048 bytes, a sort key value at most 1024, a string counted in
 * its UTF-8 bytes; the same bounds hold an index's key attributes ("An attribute value from the
 * table exceeds the maximum length for an index key attribute": an index key violation). A request
 * over them is refused with ValidationException, "One or more parameter values were invalid: Size
 * of hashkey has exceeded the maximum size limit of2048 bytes" (sic, as DynamoDB words it) or
 * "Aggregated size of all range keys has exceeded the size limit of 1024 bytes".
 *
 * dynalite checks the table's key (db/index.js `checkKeySize`), but by a string's length in UTF-16
 * units: a key of 1,000 "é" (2,000 bytes) or 700 "€" (2,100 bytes) passes it, and DynamoDB refuses
 * the second. It does not check an index's key at all. Here its `validateItem` (PutItem, a
 * BatchWriteItem's puts, a transaction's Put) and `validateKey` (GetItem, DeleteItem, UpdateItem,
 * BatchGetItem, a BatchWriteItem's deletes, a transaction's ConditionCheck) check both, in bytes,
 * after dynalite's own checks: its answer, when it has one, comes first.
 */

const require = createRequire(import.meta.url);
/* eslint-disable @typescript-eslint/no-explicit-any -- dynalite's internals are untyped JavaScript */
const db = require('dynalite/db') as any;

const HASH_KEY_TOO_LONG = `One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of${DYNAMODB_PARTITION_KEY_MAX_BYTES} bytes`;
const RANGE_KEY_TOO_LONG = `One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of ${DYNAMODB_SORT_KEY_MAX_BYTES} bytes`;

type KeyElement = { AttributeName: string; KeyType: 'HASH' | 'RANGE' };
type Table = { KeySchema: KeyElement[]; AttributeDefinitions: { AttributeName: string; AttributeType: string }[]; GlobalSecondaryIndexes?: { KeySchema: KeyElement[] }[]; LocalSecondaryIndexes?: { KeySchema: KeyElement[] }[] };
type Attributes = Record<string, Record<string, string> | undefined>;

/** The bytes DynamoDB counts of a key attribute's value: a string's UTF-8, a binary's (base64 on the wire); a number is always within the limit. */
function keyBytes(value: Record<string, string> | undefined): number {
  if (typeof value?.['S'] === 'string') return Buffer.byteLength(value['S'], 'utf8');
  if (typeof value?.['B'] === 'string') return Buffer.from(value['B'], 'base64').length;
  return 0;
}

/** AWS's refusal of the first key attribute of `schemas` over its bound in `attributes`, or undefined. */
export function keySizeError(attributes: Attributes, schemas: readonly (readonly KeyElement[])[]): { statusCode: number; body: { __type: string; message: string } } | undefined {
  for (const schema of schemas) {
    for (const { AttributeName, KeyType } of schema) {
      const bytes = keyBytes(attributes[AttributeName]);
      if (KeyType === 'HASH' && bytes > DYNAMODB_PARTITION_KEY_MAX_BYTES) return db.validationError(HASH_KEY_TOO_LONG);
      if (KeyType === 'RANGE' && bytes > DYNAMODB_SORT_KEY_MAX_BYTES) return db.validationError(RANGE_KEY_TOO_LONG);
    }
  }
  return undefined;
}

const indexSchemas = (table: Table) => [...(table.GlobalSecondaryIndexes ?? []), ...(table.LocalSecondaryIndexes ?? [])].map((index) => index.KeySchema);

let installed = false;

/** Makes dynalite (in this process: its module is one) measure keys as DynamoDB does. Idempotent. */
export function enforceKeySizes(): void {
  if (installed) return;
  installed = true;
  const validateItem = db.validateItem as (item: Attributes, table: Table) => unknown;
  const validateKey = db.validateKey as (key: Attributes, table: Table, schema?: KeyElement[]) => unknown;
  db.validateItem = (item: Attributes, table: Table) => validateItem(item, table) ?? keySizeError(item, [table.KeySchema, ...indexSchemas(table)]);
  db.validateKey = (key: Attributes, table: Table, schema?: KeyElement[]) => validateKey(key, table, schema) ?? keySizeError(key, [schema ?? table.KeySchema]);
}
