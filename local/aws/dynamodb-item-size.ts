/**
 * DynamoDB's item size limit, held on the embedded ledger as DynamoDB (and dynalite) holds the
 * DynamoDB ledger: a record whose item would be over 400 KB is refused before it is written, with
 * the error DynamoDB answers a PutItem of such an item — ValidationException, "Item size has
 * exceeded the maximum allowed size" (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items:
 * "The maximum item size in DynamoDB is 400 KB, which includes both attribute name binary length
 * (UTF-8 length) and attribute value lengths (again binary length)").
 *
 * The item measured is the one the DynamoDB engine would put for the record (`itemAttributes`,
 * plus its seal), sized as DynamoDB counts it
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html):
 *
 *   string            its UTF-8 bytes                 binary   its bytes
 *   number            1 byte + 1 per two significant digits (a sign and an even exponent cost one more)
 *   boolean, null     1 byte                          set      the sum of its members
 *   list              3 bytes + 1 per element + the elements
 *   map               3 bytes + 1 per entry + each entry's name and value
 *
 * The number rule is dynalite's, which test/local/item-limit.test.ts checks this module against on
 * generated items. (dynalite counts a string's UTF-16 units, not its UTF-8 bytes: for text beyond
 * ASCII it undercounts, and this module follows AWS.) Blob chunks and task tokens are bounded by
 * construction (lambdas/ledger/blobs.ts) and not measured here.
 */
import { itemAttributes } from '../../lambdas/ledger/dynamodb-item.js';
import { ephemeralSealer } from '../../lambdas/ledger/seal.js';
import type { StorageCall } from '../../lambdas/ledger/storage-ledger.js';
import { DYNAMODB_ITEM_MAX_BYTES } from '../../lambdas/shared/limits.js';

/** What DynamoDB answers a put of an item over the limit (HTTP 400, not retried). */
export class ItemSizeError extends Error {
  readonly $fault = 'client';
  readonly statusCode = 400;
  constructor() {
    super('Item size has exceeded the maximum allowed size');
    this.name = 'ValidationException';
  }
}

/** The size of an item (native values, as the document client takes them), in DynamoDB's bytes. */
export function itemSize(item: Readonly<Record<string, unknown>>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) if (value !== undefined) size += utf8(name) + valueSize(value);
  return size;
}

/**
 * The size of an item as the wire carries it (attribute values: `{ S }`, `{ N }`, `{ B }`, …, as
 * a BatchGetItem answers one), in DynamoDB's bytes: the same rules as `itemSize`. A binary value is
 * its decoded bytes (the wire's base64 text, or the bytes themselves).
 */
export function wireItemSize(item: Readonly<Record<string, unknown>>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item)) size += utf8(name) + wireValueSize(value as Readonly<Record<string, unknown>>);
  return size;
}

function wireValueSize(value: Readonly<Record<string, unknown>>): number {
  const [type, content] = Object.entries(value)[0] ?? [];
  switch (type) {
    case 'S':
      return utf8(content as string);
    case 'N':
      return numberSize(content as string);
    case 'B':
      return binarySize(content);
    case 'BOOL':
    case 'NULL':
      return 1;
    case 'SS':
      return (content as string[]).reduce((sum, member) => sum + utf8(member), 0);
    case 'NS':
      return (content as string[]).reduce((sum, member) => sum + numberSize(member), 0);
    case 'BS':
      return (content as unknown[]).reduce<number>((sum, member) => sum + binarySize(member), 0);
    case 'L':
      return 3 + (content as Record<string, unknown>[]).reduce((sum, element) => sum + 1 + wireValueSize(element), 0);
    case 'M': {
      const entries = Object.keys(content as object).length;
      return 3 + entries + wireItemSize(content as Record<string, unknown>);
    }
    default:
      throw new Error(`an attribute value of type ${String(type)}, which DynamoDB does not have`);
  }
}

const binarySize = (content: unknown) => (typeof content === 'string' ? Buffer.from(content, 'base64').byteLength : (content as Uint8Array).byteLength);

function valueSize(value: unknown): number {
  if (typeof value === 'string') return utf8(value);
  if (typeof value === 'number' || typeof value === 'bigint') return numberSize(String(value));
  if (typeof value === 'boolean' || value === null) return 1;
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...(value as Set<unknown>)].reduce<number>((sum, member) => sum + valueSize(member), 0);
  if (Array.isArray(value)) return 3 + value.reduce<number>((sum, element) => sum + 1 + valueSize(element ?? null), 0);
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, member]) => member !== undefined);
    return 3 + entries.length + itemSize(Object.fromEntries(entries));
  }
  throw new Error(`a ledger item holds a ${typeof value}, which DynamoDB cannot store`);
}

/**
 * A bound that `itemSize` never exceeds, cheap enough for every put: a string counts 3 bytes per
 * UTF-16 unit (UTF-8 needs at most 3 for one unit, 4 for a surrogate pair of two), a JavaScript
 * number 12 (at most 17 significant digits: 1 + 9 + 1 for an even exponent + 1 for a sign), an
 * absent value as a null; the rest as `itemSize` counts them. What `itemSize` refuses it refuses.
 */
export function itemSizeBound(item: Readonly<Record<string, unknown>>): number {
  return entriesBound(item).size;
}

/** The names and values of `item` (inherited ones too, which can only add), and how many there are. */
function entriesBound(item: Readonly<Record<string, unknown>>): { size: number; count: number } {
  let size = 0;
  let count = 0;
  for (const name in item) {
    size += 3 * name.length + boundOf(item[name]);
    count++;
  }
  return { size, count };
}

function boundOf(value: unknown): number {
  if (typeof value === 'string') return 3 * value.length;
  if (typeof value === 'number') return 12;
  if (typeof value === 'boolean' || value === null || value === undefined) return 1;
  if (typeof value === 'bigint' || value instanceof Uint8Array) return valueSize(value);
  if (value instanceof Set) {
    let size = 0;
    for (const member of value as Set<unknown>) size += boundOf(member);
    return size;
  }
  if (Array.isArray(value)) {
    let size = 3;
    for (const element of value) size += 1 + boundOf(element);
    return size;
  }
  if (typeof value === 'object') {
    const entries = entriesBound(value as Record<string, unknown>);
    return 3 + entries.count + entries.size;
  }
  return valueSize(value);
}

/** DynamoDB stores a number as its significant digits, two to a byte, after one byte of exponent. */
function numberSize(text: string): number {
  const [mantissa = '0', exponent = '0'] = Number(text).toExponential().split('e');
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace(/[-.]/g, '').replace(/0+$/, '');
  if (digits === '' || digits === '0') return 1;
  const even = digits.length % 2 === 0 && Number(exponent) % 2 === 0;
  return 1 + Math.ceil(digits.length / 2) + (even ? 1 : 0) + (negative ? 1 : 0);
}

const utf8 = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * The storage guard (`StorageLedger.guardStorage`) that refuses a put of a record over the limit,
 * for the engine that is not DynamoDB (on dynalite, dynalite refuses it itself).
 */
export function itemSizeGuard(): (call: StorageCall) => void {
  // Every seal has the same length (an HMAC): the attribute `seal` and its value.
  const sealBytes = itemSize({ seal: ephemeralSealer().seal({ pk: 'p', sk: 's' }, {}) });
  return (call) => {
    if (!('put' in call) || !call.items) return;
    call.put.forEach((key, index) => {
      const stored = call.items![index];
      if (!stored) return;
      // Measured exactly only when the bound does not already show it fits (records are mostly far below the limit).
      const item = itemAttributes(key, stored);
      if (itemSizeBound(item) + sealBytes > DYNAMODB_ITEM_MAX_BYTES && itemSize(item) + sealBytes > DYNAMODB_ITEM_MAX_BYTES) throw new ItemSizeError();
    });
  };
}
