import type { Span } from './append-log.js';
import { aggregateKey, effectKey, type Stored } from './protocol.js';
import type { Hidden, Item } from './sealed-log.js';
import { runKey } from '../records/ledger-records.js';
import { deepFreeze, isMadeFrozen, NOT_PLAIN } from '../shared/plain-copy.js';

/**
 * The embedded ledger's in-memory form: a Partition per partition key, holding its items (or, let
 * go of, where their lines are), and the items as the engine holds them — record, JSON, hidden
 * attributes, seal — copied out to callers. Which partitions belong together (a run's, an
 * effect's) is said here too: they are let go of and read back together (embedded-tiers.ts).
 */

export const RUN_SK = runKey('').sk;
/** The partitions that belong to one run: its records, its task tokens, its blobs (records.ts, protocol.ts). */
const RUN_SCOPED = /^(RUN|TOKEN|BLOB)#/;
/** The partitions of business-key effects (protocol.ts `effectKey`). */
export const EFFECT_PREFIX = effectKey('').pk;
const AGGREGATE_PREFIX = aggregateKey('').pk;

/**
 * A partition that guards across runs (a business-key effect, EFFECT#…, or an aggregate, AGG#…):
 * kept in memory while recently used (`retainEffects`), then let go of like a finished run's.
 */
export function crossRunPartition(pk: string): boolean {
  return pk.startsWith(EFFECT_PREFIX) || pk.startsWith(AGGREGATE_PREFIX);
}

/** Reads the items of a partition back from their lines (embedded-files.ts `readLines`). */
export type ReadLines = (spans: readonly Span[]) => [string, Item, Span][];

/**
 * A stored item as the protocol reads it: a copy of its record (`shared`: the record itself,
 * frozen) and of its hidden attributes, and the item itself as the basis of a put.
 */
export function stored(item: Item | undefined, shared = false): Stored | undefined {
  if (!item) return undefined;
  const { countedSteps, guardReasons } = item.hidden;
  // Set field by field (a literal of conditional spreads copies an object for each): every read makes one.
  const meta: Stored['meta'] = {};
  if (countedSteps) meta.countedSteps = [...countedSteps];
  if (guardReasons) meta.guardReasons = [...guardReasons];
  return { record: copy(item, shared) as Record<string, unknown>, meta, basis: item };
}

/**
 * The items of one partition, and their sort-key order (computed when a query needs it). On disk,
 * also where each item's line is in the log. Opened to read, an evicted partition (a finished
 * run's) drops its items, keeps only where their lines are (packed: 16 bytes an item) and its run's
 * status, and reads them back when next asked for; opened to write, the ledger drops the whole
 * partition instead (cold-store.ts).
 */
export class Partition {
  private held?: Map<string, Item> = new Map();
  private order?: [string, Item][];
  /** Where each held item's line is (on disk). */
  private where?: Map<string, Span> = new Map();
  /** Evicted: offset and length of each item's line, and which of them is the run record's. */
  private packed?: { spans: Float64Array; run?: Span };
  /** Restored from an index: where its lines are, asked of the index when first needed. */
  private unread?: () => { lines: readonly Span[]; run: Span | undefined };
  /** The status and creation time of the run record (RUN partitions): what listing the runs reads. */
  status?: string;
  createdAt?: string;
  /** What the cold store holds of this partition is current: it was read back from there, and has not changed since. */
  noted = false;

  constructor(private readonly read: ReadLines) {}

  /** A partition of the items read from `entries` and where their lines are; `noted`: as the cold store holds them. */
  static filled(read: ReadLines, entries: readonly [string, Item, Span][], noted: boolean): Partition {
    const partition = new Partition(read);
    for (const [sk, stored, span] of entries) partition.put(sk, stored, span);
    partition.noted = noted;
    return partition;
  }

  /** Each item in memory, and where its line is (undefined: not on disk). */
  *entries(): Generator<[string, Item, Span | undefined]> {
    for (const [sk, stored] of this.items) yield [sk, stored, this.where?.get(sk)];
  }

  get items(): Map<string, Item> {
    if (this.held) return this.held;
    const { spans } = this.pack();
    const unpacked: Span[] = [];
    for (let i = 0; i < spans.length; i += 2) unpacked.push({ offset: spans[i]!, bytes: spans[i + 1]! });
    this.held = new Map();
    this.where = new Map();
    for (const [sk, stored, span] of this.read(unpacked)) {
      this.held.set(sk, stored);
      this.where.set(sk, span);
    }
    this.packed = undefined;
    return this.held;
  }

  /** The run record's item (RUN partitions), read back alone when the partition is evicted. */
  runItem(): Item | undefined {
    if (this.held || !this.pack().run) return this.held?.get(RUN_SK);
    return this.read([this.packed!.run!])[0]![1];
  }

  /** Where the lines of an evicted partition are (asked of the index, for one restored from it). */
  private pack(): { spans: Float64Array; run?: Span } {
    if (this.unread) {
      const { lines, run } = this.unread();
      this.unread = undefined;
      const spans = new Float64Array(lines.length * 2);
      lines.forEach((span, i) => {
        spans[2 * i] = span.offset;
        spans[2 * i + 1] = span.bytes;
      });
      this.packed = { spans, ...(run && { run: { offset: run.offset, bytes: run.bytes } }) };
    }
    return this.packed!;
  }

  /** Removes the item under `sk` (a prune). */
  delete(sk: string): void {
    this.items.delete(sk);
    this.where!.delete(sk);
    this.order = undefined;
    this.noted = false;
  }

  put(sk: string, stored: Item, span?: Span): void {
    const items = this.items;
    this.noted = false;
    if (!items.has(sk)) this.order = undefined;
    else if (this.order) this.order.find((entry) => entry[0] === sk)![1] = stored;
    items.set(sk, stored);
    if (sk === RUN_SK) {
      this.status = String((stored.record as { status?: unknown }).status);
      this.createdAt = String((stored.record as { createdAt?: unknown }).createdAt);
    }
    if (span) this.where!.set(sk, span);
    else this.where!.delete(sk);
  }

  /** Drops the items from memory: only a partition whose every item has its line on disk can read them back. */
  evict(): void {
    if (!this.held || this.where!.size !== this.held.size || this.held.size === 0) return;
    const spans = new Float64Array(this.where!.size * 2);
    let i = 0;
    for (const span of this.where!.values()) {
      spans[i++] = span.offset;
      spans[i++] = span.bytes;
    }
    const run = this.where!.get(RUN_SK);
    this.packed = { spans, ...(run && { run }) };
    this.held = undefined;
    this.where = undefined;
    this.order = undefined;
  }

  /** Evicted from the start, as an index records it: where its lines are (`unread`, asked for when first needed), and its run's status and creation time. */
  restore(unread: () => { lines: readonly Span[]; run: Span | undefined }, status: string | undefined, createdAt: string | undefined): void {
    this.unread = unread;
    this.held = undefined;
    this.where = undefined;
    this.order = undefined;
    this.status = status;
    this.createdAt = createdAt;
  }

  /** The log was rewritten: the item under `sk` is now the line at `span`. */
  relocated(sk: string, span: Span): void {
    this.items;
    this.noted = false;
    this.where!.set(sk, span);
  }

  sorted(): [string, Item][] {
    // Plain code-unit order: for the ASCII keys of records.ts, the byte order DynamoDB sorts by.
    this.order ??= [...this.items.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((sk) => [sk, this.items.get(sk)!]);
    return this.order;
  }
}

/** The group a partition is let go of with (cold-store.ts): its run's (`RUN#<runId>`), or its own. */
export function groupOfPartition(pk: string): string {
  const runId = runOfPartition(pk);
  return runId !== undefined ? runKey(runId).pk : pk;
}

/** The run whose partition `pk` is (RUN_SCOPED), else undefined. */
export function runOfPartition(pk: string): string | undefined {
  return RUN_SCOPED.test(pk) ? pk.slice(pk.indexOf('#') + 1) : undefined;
}

/** Whether a put's expected item is the current one: the same object, or (read back from the log) the same sealed content. */
export function sameItem(current: Item | undefined, expected: Item | undefined): boolean {
  if (current === expected) return true;
  return current !== undefined && expected !== undefined && current.seal !== '' && current.seal === expected.seal && current.json === expected.json;
}

/** An item as the embedded ledger holds it: its record, the record's JSON, its hidden attributes, its seal. */
export function item<T>(record: T, hidden: Hidden, seal: string): Item<T> {
  return { record, json: JSON.stringify(record), hidden, seal };
}

/**
 * A stored record as a read returns it: a fresh copy (for listConversation's hundreds of records,
 * ~5× faster than parsing its JSON), so that a caller that changes what it was handed does not
 * change the store; or, `shared` (EmbeddedLedgerOptions `sharedReads`), the stored record itself,
 * deeply frozen: a caller that tries to change it throws, and nothing is copied. The freeze stops
 * at an object frozen already: the store's objects are its own (made by `plainCopy` or parsed from
 * JSON when stored), or a written record's frozen all through when stored (`frozenInPlace`), so
 * none is frozen only on its surface.
 */
export function copy<T>(stored: Item<T>, shared = false): T {
  return shared ? deepFreeze(stored.record) : (cloneJson(stored.record) as T);
}

/**
 * Deep-copies a value parsed from JSON: plain objects, arrays and primitives only. Every read of
 * the embedded ledger copies what it returns, so this runs on each (issue 38: a third of a read's
 * cost in memory). A level is copied whole first — an array by `slice`, an object by spread, which
 * V8 copies in one go and which keeps an own "__proto__" key a key (it defines each property, it
 * does not assign it) — then each object or array in it is replaced by its copy (an assignment to
 * an own "__proto__" data property writes that property). The keys keep their order.
 */
export function cloneJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) {
    const clone = value.slice();
    for (let index = 0; index < clone.length; index++) {
      const entry: unknown = clone[index];
      if (typeof entry === 'object' && entry !== null) clone[index] = cloneJson(entry);
    }
    return clone;
  }
  const clone: Record<string, unknown> = { ...value };
  for (const key of Object.keys(clone)) {
    const field = clone[key];
    if (typeof field === 'object' && field !== null) clone[key] = cloneJson(field);
  }
  return clone;
}

/**
 * A written record as a store that shares its records keeps it (EmbeddedLedgerOptions
 * `sharedReads`): the record itself, not a copy, when a JSON round trip would give it back as it
 * is (`sameAfterJson`), every object and array in it frozen where it is, so that its writer can no
 * more change it than its readers can (a change throws, and the store is left as it was); else
 * NOT_PLAIN, the caller's objects left as they were (the store copies such a record).
 *
 * The objects frozen here are not marked as `plainCopy`'s frozen copies are (`isMadeFrozen`), though
 * that would spare a record written again around them (a run record with a counter changed) a
 * walk: each would go into that WeakSet, and in the replay bench's A/B (issue 38) the walks spared
 * were the cold replay's while the warm one came out no cheaper.
 */
export function frozenInPlace(record: unknown): unknown {
  if (!sameAfterJson(record)) return NOT_PLAIN;
  freezeAll(record);
  return record;
}

/** Whether `JSON.parse(JSON.stringify(value))` equals `value`: what `plainCopy` copies, and no undefined field. */
function sameAfterJson(value: unknown): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value) && !Object.is(value, -0);
    case 'object': {
      if (value === null || isMadeFrozen(value)) return true;
      if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index++) if (!sameAfterJson(value[index])) return false;
        return true;
      }
      if (Object.getPrototypeOf(value) !== Object.prototype) return false;
      for (const key of Object.keys(value)) if (!sameAfterJson((value as Record<string, unknown>)[key])) return false;
      return true;
    }
    default:
      return false;
  }
}

/**
 * Freezes plain data all through, children first. Unlike `deepFreeze`, it does not stop at an
 * object already frozen: one frozen by its writer may hold objects that are not.
 */
function freezeAll(value: unknown): void {
  if (typeof value !== 'object' || value === null || isMadeFrozen(value)) return;
  if (Array.isArray(value)) for (let index = 0; index < value.length; index++) freezeAll(value[index]);
  else for (const key of Object.keys(value)) freezeAll((value as Record<string, unknown>)[key]);
  Object.freeze(value);
}
