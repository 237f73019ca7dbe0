/**
 * DynamoDB's 400 KB item limit, on the ledger that makes no DynamoDB call: the embedded ledger of
 * the local stack refuses a record whose DynamoDB item would be over it, with the error DynamoDB
 * (and dynalite, which checks it on PutItem) answers — ValidationException, "Item size has
 * exceeded the maximum allowed size". "The maximum item size in DynamoDB is 400 KB, which includes
 * both attribute name binary length (UTF-8 length) and attribute value lengths"
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/ServiceQuotas.html#limits-items).
 */
import { createRequire } from 'node:module';
import { marshall } from '@aws-sdk/util-dynamodb';
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DynamoDbLedger } from '../../lambdas/ledger/dynamodb-ledger.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { ephemeralSealer } from '../../lambdas/ledger/seal.js';
import { ensureTable, startDynamo, type LocalDynamo } from '../../local/services/dynamodb.js';
import { itemSize, itemSizeBound, itemSizeGuard, wireItemSize } from '../../local/aws/dynamodb-item-size.js';
import { DYNAMODB_ITEM_MAX_BYTES } from '../../lambdas/shared/limits.js';
import { ledgerTableFromTemplate } from '../../local/template/synthesize.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { run, turn } from '../contract/fixtures.js';
import { startHarness } from '../support/refund-harness.js';

const dynaliteItemSize = (createRequire(import.meta.url)('dynalite/db/index.js') as { itemSize: (item: unknown) => number }).itemSize;

let dynamo: LocalDynamo;
beforeAll(async () => {
  dynamo = await startDynamo();
  await ensureTable(dynamo.client, ledgerTableFromTemplate(await cachedTemplate('agent'), 'item-limit'));
});
afterAll(async () => dynamo.close());

function embedded(): Ledger {
  const ledger = EmbeddedLedger.open({ sealer: ephemeralSealer() });
  ledger.guardStorage(itemSizeGuard());
  return ledger;
}
const onDynalite = (): Ledger => new DynamoDbLedger(dynamo.client, 'item-limit', ephemeralSealer());

/** A turn whose text is `bytes` long: the item is the text and ~400 bytes of the turn's other fields. */
const turnOf = (runId: string, bytes: number) => turn(1, 'x'.repeat(bytes), runId);

describe.each([
  ['the embedded ledger (the twin)', embedded],
  ['the DynamoDB ledger on dynalite', onDynalite],
] as const)('%s', (_name, open) => {
  it('refuses a record whose item is over 400 KB: ValidationException, as DynamoDB answers it, and writes nothing', async () => {
    const ledger = open();
    await ledger.createRun(run('big-turn'));
    const refused = ledger.recordTurn(turnOf('big-turn', DYNAMODB_ITEM_MAX_BYTES));
    await expect(refused).rejects.toMatchObject({ name: 'ValidationException', message: 'Item size has exceeded the maximum allowed size' });
    expect(await ledger.getTurn('big-turn', 1)).toBeUndefined();
  });

  it('stores a record just under it', async () => {
    const ledger = open();
    await ledger.createRun(run('large-turn'));
    await ledger.recordTurn(turnOf('large-turn', DYNAMODB_ITEM_MAX_BYTES - 2_000));
    expect((await ledger.getTurn('large-turn', 1))?.content).toHaveLength(1);
  });
});

describe('where the limit falls', () => {
  // One instant for both searches: each item carries its TTL (`expiresAt`, epoch seconds from the
  // ledger's clock), whose size DynamoDB counts by its significant digits — a second ending in 0 is
  // a byte shorter, so two searches a second apart could find limits a byte apart.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-11-29T02:00:07.000Z'));
  });
  afterEach(() => vi.useRealTimers());

  /** The longest turn text `open()`'s ledger stores (a binary search between 399,000 and 409,600 bytes). */
  async function longestStored(open: () => Ledger, name: string): Promise<number> {
    const ledger = open();
    let [stored, refused] = [DYNAMODB_ITEM_MAX_BYTES - 10_000, DYNAMODB_ITEM_MAX_BYTES];
    for (let attempt = 0; refused - stored > 1; attempt++) {
      const middle = Math.floor((stored + refused) / 2);
      const runId = `${name}-${attempt}`;
      await ledger.createRun(run(runId));
      const ok = await ledger.recordTurn(turnOf(runId, middle)).then(() => true, (error: Error) => (expect(error.name).toBe('ValidationException'), false));
      if (ok) stored = middle;
      else refused = middle;
    }
    return stored;
  }

  it('is the same byte on the embedded ledger as on dynalite: the item measured is the one DynamoDB would store, its seal included', async () => {
    const [onEmbedded, onDynamo] = [await longestStored(embedded, 'edge-embedded'), await longestStored(onDynalite, 'edge-dynalite')];
    expect(onEmbedded).toBe(onDynamo);
    expect(onDynamo).toBeGreaterThan(DYNAMODB_ITEM_MAX_BYTES - 1_000);
  });
});

describe("the item's size", () => {
  // ASCII names and strings: dynalite counts UTF-16 units where AWS counts UTF-8 bytes.
  const ascii = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789 _-'), maxLength: 40 });
  // Numbers the document client marshals (it refuses integers past Number.MAX_SAFE_INTEGER).
  const number = fc.oneof(fc.integer(), fc.double({ min: -1e12, max: 1e12, noNaN: true }).filter((n) => n === 0 || Math.abs(n) > 1e-12));
  // Attribute names as the ledger writes them: never `__proto__`, which fast-check's dictionaries
  // sometimes make and the marshaller drops as an object's prototype.
  const name = ascii.filter((k) => k.length > 0 && k !== '__proto__');
  const value = fc.letrec((tie) => ({
    value: fc.oneof({ depthSize: 'small' }, ascii, number, fc.boolean(), fc.constant(null), fc.array(tie('value'), { maxLength: 4 }), fc.dictionary(name, tie('value'), { maxKeys: 4 })),
  })).value;
  const item = fc.dictionary(name, value, { maxKeys: 8 });

  it("is dynalite's size of the same item, on generated items", () => {
    fc.assert(
      fc.property(item, (generated) => {
        expect(itemSize(generated)).toBe(dynaliteItemSize(marshall(generated, { removeUndefinedValues: true })));
      }),
      { numRuns: 500 },
    );
  });

  it('is never over the bound the guard checks first, on generated items of any text (the exact size is only measured above the bound)', () => {
    // Any UTF-16 text, lone surrogates and pairs included, and sets, absent values and binary, which the ledger's items hold too.
    const text = fc.string({ unit: 'binary', maxLength: 40 });
    const key = text.filter((k) => k !== '__proto__');
    const anyValue = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        text,
        fc.double(),
        fc.boolean(),
        fc.constant(null),
        fc.constant(undefined),
        fc.uint8Array({ maxLength: 8 }),
        fc.uniqueArray(text, { maxLength: 4 }).map((members) => new Set(members)),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(key, tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(fc.dictionary(key, anyValue, { maxKeys: 8 }), (generated) => {
        expect(itemSizeBound(generated)).toBeGreaterThanOrEqual(itemSize(generated));
      }),
      { numRuns: 2_000 },
    );
  });

  it('counts UTF-8 bytes, as AWS does, for text beyond ASCII', () => {
    expect(itemSize({ name: 'é' })).toBe(4 + 2);
    expect(itemSize({ emoji: '👍' })).toBe(5 + 4);
  });

  it('is the same measured on the wire (the attribute values a BatchGetItem answers), on generated items of any text, sets and binary', () => {
    // Well-formed text (the marshaller's UTF-8 has no lone surrogate), sets of each kind, binary.
    const text = fc.string({ unit: 'grapheme', maxLength: 20 });
    const key = text.filter((k) => k.length > 0 && k !== '__proto__');
    const anyValue = fc.letrec((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        text,
        number,
        fc.boolean(),
        fc.constant(null),
        fc.uint8Array({ minLength: 1, maxLength: 8 }),
        fc.uniqueArray(text, { minLength: 1, maxLength: 4 }).map((members) => new Set(members)),
        fc.uniqueArray(fc.integer(), { minLength: 1, maxLength: 4 }).map((members) => new Set(members)),
        fc.array(tie('value'), { maxLength: 4 }),
        fc.dictionary(key, tie('value'), { maxKeys: 4 }),
      ),
    })).value;
    fc.assert(
      fc.property(fc.dictionary(key, anyValue, { maxKeys: 8 }), (generated) => {
        const wire = marshall(generated, { removeUndefinedValues: true });
        expect(wireItemSize(wire)).toBe(itemSize(generated));
        // As the JSON wire carries binary: base64 text.
        expect(wireItemSize(JSON.parse(JSON.stringify(wire, (_, value: unknown) => (value instanceof Uint8Array ? Buffer.from(value).toString('base64') : value))))).toBe(itemSize(generated));
      }),
      { numRuns: 500 },
    );
    expect(wireItemSize({ name: { S: 'é' }, list: { L: [{ N: '1' }, { BOOL: true }] } })).toBe(4 + 2 + 4 + 3 + 1 + 2 + 1 + 1);
  });
});

describe('the local stack', () => {
  it('holds its embedded ledger to the limit', async () => {
    const { stack } = await startHarness({ recovery: false });
    try {
      await stack.ledger.createRun(run('stack-big-turn'));
      await expect(stack.ledger.recordTurn(turnOf('stack-big-turn', DYNAMODB_ITEM_MAX_BYTES))).rejects.toMatchObject({ name: 'ValidationException' });
    } finally {
      await stack.close();
    }
  });
});
