import { createHash, type Hash } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LedgerIntegrityError } from '../shared/errors.js';
import { sameSecret } from '../shared/same-secret.js';
import type { Span } from './append-log.js';
import type { Key } from './protocol.js';
import type { LedgerSealer } from './seal.js';

/**
 * Where the embedded ledger on disk keeps track of the partitions it let go of from memory, so
 * that an engine that runs for months holds in memory only what is live (the running runs, the
 * most recently used finished ones), not one entry per run it ever finished.
 *
 * A ledger lets go of a group of partitions at once: a finished run's (its RUN, TOKEN and BLOB
 * partitions), or one business-key effect's (EFFECT#…). The group's records stay where they
 * are, in the log; the store notes where each record's line is and the seal that line carries,
 * and which approval ids the group's records hold. When a record of the group is asked for again,
 * the ledger reads the group back: each line from the log, its seal checked, and checked to be the
 * one the store noted (so that an older line of the same record cannot stand in for it).
 *
 * The store is `ledger.cold/` beside the log: 256 bucket files, a key's bucket the first byte of
 * its sha256, each a list of lines appended as groups are let go of (the last line for a key is
 * current). Each line carries a MAC under the ledger's chain key (its own domain), so that no one
 * without the key can make it point elsewhere. Reading a group reads one bucket: ~1/256 of what
 * the store holds.
 *
 * It is derived, never the record: the process that opens the ledger to write owns it while it
 * holds the ledger's lock, and builds it from the log (`build`): anew, unless the store on disk is
 * the one an earlier open built from the same log, whole (`built.json`, below). A reader
 * (`EmbeddedLedger.openToRead`) does not use it; it has the sealed index.
 */
export const COLD_DIR = 'ledger.cold';

/**
 * What the store on disk was built from, written last when an open builds it and removed before
 * anything else is noted in it: the log it was built from (its lines, bytes and chain), each bucket
 * file's sha256, and a MAC under the chain key. An open of the same log whose store matches it in
 * every bucket keeps it as it is; a log appended to since, a build cut short by a crash, a store
 * noted in after its build, or a bucket gone, added or altered is made anew. Every open of the
 * ledger to write (every CLI command that may write, one then refused too) built the whole store
 * again before it: a write of every bucket for nothing changed.
 */
const BUILT_FILE = 'built.json';

/**
 * One record of a group let go of: its key, where its line is in the log, and what identifies that
 * line: the seal it carries, or (noted from the index, which holds no seals) the sha256 of its bytes.
 */
export interface ColdItem extends Key, Span {
  readonly seal: string;
  readonly hash?: string;
}

export interface ColdGroup {
  /** The group's key: `RUN#<runId>` for a run's partitions, the partition's key otherwise. */
  readonly group: string;
  readonly items: readonly ColdItem[];
  /** A run's group: its run record's status and creation time (what listing the runs reads). */
  readonly run?: { readonly status: string; readonly createdAt: string };
  /** The approval ids its records hold (the byApprovalId index of the records let go of). */
  readonly approvals: readonly string[];
}

type GroupLine = ['g', string, [string, string, number, number, string, string?][], string?, string?, string[]?];
type ApprovalLine = ['a', string, string];

/** The MAC's domain: no log line's chain, no head and no index MAC is this. */
const MAC_DOMAIN = 'savepoint ledger cold v1';
const BUILT_DOMAIN = 'savepoint ledger cold built v1';
/** The form of the groups an open notes (embedded-tiers.ts `take`) and of their lines: a store built by another is made anew. */
const BUILD_FORMAT = 1;

/** The log a store is built from: its lines, their bytes and the chain of the last one (ledger-index.ts Checkpoint). */
interface BuiltFrom {
  readonly lines: number;
  readonly bytes: number;
  readonly tip: string;
}

export class ColdStore {
  /**
   * What this process wrote to each bucket file, hashed as it was appended: the store owns its
   * directory while the ledger is open, so a bucket must hold exactly that. A bucket that is gone,
   * cut short, added to or edited is damage, named — never read as "nothing there" (a group that
   * vanished would look like a run that never was, an effect never claimed).
   */
  private readonly written = new Map<string, Hash>();
  /** Whether this store has made its directory: not until it first notes something (most opens let go of nothing). */
  private made = false;
  /**
   * Every key noted (a group's, an approval id's), as a Bloom filter: a key never noted — a run
   * just started, an effect claimed for the first time, asked for on every such write — is
   * answered "not here" without reading and hashing its whole bucket. Made on the first note.
   */
  private noted?: KeyFilter;
  /** Whether `built.json` stands for the store: from its build until something else is noted. */
  private built = false;

  private constructor(
    readonly dir: string,
    private readonly sealer: LedgerSealer,
  ) {}

  /**
   * A store in `dir` made anew: whatever an earlier process left there is removed first. The
   * directory itself is made when the store first notes something: an open that lets go of
   * nothing makes and removes no directory (a reopen is then one `lstat` here, not three calls).
   */
  static create(dir: string, sealer: LedgerSealer): ColdStore {
    rmSync(dir, { recursive: true, force: true });
    return new ColdStore(dir, sealer);
  }

  /** A store in `dir`, as an earlier process left it: `build` decides whether to keep it. */
  static at(dir: string, sealer: LedgerSealer): ColdStore {
    return new ColdStore(dir, sealer);
  }

  /**
   * Makes the store hold `groups`, the groups an open lets go of from the log at `from`: the store
   * on disk when `built.json` says it was built from that log and every bucket is what it says (its
   * keys noted in the filter, its buckets' hashes taken from them), or else made anew, `built.json`
   * written last.
   */
  build(groups: readonly ColdGroup[], from: BuiltFrom): void {
    if (this.keep(from)) {
      for (const group of groups) {
        (this.noted ??= new KeyFilter()).add(group.group);
        for (const id of group.approvals) this.noted.add(approvalBucketKey(id));
      }
      this.built = true;
      return;
    }
    rmSync(this.dir, { recursive: true, force: true });
    this.made = false;
    this.written.clear();
    this.noted = undefined;
    this.putAll(groups);
    if (this.made) {
      const buckets = Object.fromEntries([...this.written].map(([path, hash]) => [path.slice(this.dir.length + 1), hash.copy().digest('hex')]));
      const json = JSON.stringify({ format: BUILD_FORMAT, from: { lines: from.lines, bytes: from.bytes, tip: from.tip }, buckets });
      // Last, after every bucket: a build cut short by a crash has none (or one cut short, whose MAC fails).
      writeFileSync(join(this.dir, BUILT_FILE), `${json}\t${this.sealer.chain(BUILT_DOMAIN, json)}`, { mode: 0o600 });
      this.built = true;
    }
  }

  /** Whether the store on disk is the one built from `from`, whole: then its buckets are this process's, as written. */
  private keep(from: BuiltFrom): boolean {
    const built = join(this.dir, BUILT_FILE);
    if (!existsSync(built)) return false;
    let written: Map<string, Hash> | undefined;
    try {
      written = this.builtFrom(readFileSync(built, 'utf8'), from);
    } catch {
      // A store it cannot read (a directory where a bucket was) is made anew, as any other damage.
      return false;
    }
    if (!written) return false;
    for (const [path, hash] of written) this.written.set(path, hash);
    this.made = true;
    return true;
  }

  /** Each bucket's hash, when `text` (built.json) is this ledger's, of a build from `from`, and every bucket is what it says. */
  private builtFrom(text: string, from: BuiltFrom): Map<string, Hash> | undefined {
    const tab = text.lastIndexOf('\t');
    const json = text.slice(0, tab);
    if (tab < 0 || !sameSecret(text.slice(tab + 1), this.sealer.chain(BUILT_DOMAIN, json))) return undefined;
    const noted = JSON.parse(json) as { format: number; from: BuiltFrom; buckets: Record<string, string> };
    if (noted.format !== BUILD_FORMAT || noted.from.lines !== from.lines || noted.from.bytes !== from.bytes || noted.from.tip !== from.tip) return undefined;
    const names = readdirSync(this.dir).filter((name) => name !== BUILT_FILE);
    if (names.length !== Object.keys(noted.buckets).length) return undefined;
    const written = new Map<string, Hash>();
    for (const name of names) {
      const path = join(this.dir, name);
      const hash = createHash('sha256').update(readFileSync(path));
      if (noted.buckets[name] !== hash.copy().digest('hex')) return undefined;
      written.set(path, hash);
    }
    return written;
  }

  /** Notes `group` as let go of (replacing what the store held for it), and its approval ids. */
  put(group: ColdGroup): void {
    this.putAll([group]);
  }

  /** Notes each of `groups` as `put` does, with one write per bucket (an open notes every finished run at once). */
  putAll(groups: Iterable<ColdGroup>): void {
    const buckets = new Map<string, string[]>();
    const add = (key: string, value: GroupLine | ApprovalLine) => {
      const path = this.bucket(key);
      (this.noted ??= new KeyFilter()).add(key);
      const json = JSON.stringify(value);
      if (!buckets.has(path)) buckets.set(path, []);
      buckets.get(path)!.push(`${json}\t${this.sealer.chain(MAC_DOMAIN, json)}\n`);
    };
    for (const group of groups) {
      const line: GroupLine = ['g', group.group, group.items.map(({ pk, sk, offset, bytes, seal, hash }) => (hash === undefined ? [pk, sk, offset, bytes, seal] : [pk, sk, offset, bytes, seal, hash]))];
      if (group.run || group.approvals.length > 0) line.push(group.run?.status, group.run?.createdAt, [...group.approvals]);
      add(group.group, line);
      for (const id of group.approvals) add(approvalBucketKey(id), ['a', id, group.group] satisfies ApprovalLine);
    }
    // The store is no longer what was built: the next open builds it again (one deleted under the engine is gone already).
    if (buckets.size > 0 && this.built) {
      rmSync(join(this.dir, BUILT_FILE), { force: true });
      this.built = false;
    }
    if (buckets.size > 0 && !this.made) {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      this.made = true;
    }
    for (const [path, lines] of buckets) {
      const text = lines.join('');
      appendFileSync(path, text, { mode: 0o600 });
      if (!this.written.has(path)) this.written.set(path, createHash('sha256'));
      this.written.get(path)!.update(text);
    }
  }

  /** The group under `key` as last noted, or undefined when none was let go of. */
  get(key: string): ColdGroup | undefined {
    const found = this.last(key, [`["g",${JSON.stringify(key)},`]) as GroupLine | undefined;
    return found && groupOf(found);
  }

  /** The key of the group that holds approval `approvalId`, or undefined. */
  groupOfApproval(approvalId: string): string | undefined {
    const found = this.last(approvalBucketKey(approvalId), [`["a",${JSON.stringify(approvalId)},`]) as ApprovalLine | undefined;
    return found?.[2];
  }

  /** Every group the store holds now (each bucket read in turn: time in what it holds, memory in one bucket). */
  *groups(): Generator<ColdGroup> {
    const present = existsSync(this.dir) ? readdirSync(this.dir).filter((name) => name !== BUILT_FILE) : [];
    const names = new Set([...present, ...[...this.written.keys()].map((path) => path.slice(this.dir.length + 1))]);
    for (const name of [...names].sort()) {
      const current = new Map<string, GroupLine>();
      for (const [text, value] of this.lines(join(this.dir, name))) {
        if (value[0] === 'g') current.set(value[1] as string, value as GroupLine);
        else if (value[0] !== 'a') throw this.damaged(join(this.dir, name), `an unknown line: ${text.slice(0, 80)}`);
      }
      yield* [...current.values()].map(groupOf);
    }
  }

  /** The last line of `key`'s bucket that starts with one of `prefixes`, its MAC checked. */
  private last(key: string, prefixes: readonly string[]): unknown[] | undefined {
    // Sound because the store is this process's alone (made anew at open): a key it never noted is not in it.
    if (!this.noted?.mayHold(key)) return undefined;
    const path = this.bucket(key);
    const text = this.read(path);
    for (let end = text.length - 1; end > 0; ) {
      const start = text.lastIndexOf('\n', end - 1) + 1;
      const line = text.slice(start, end);
      if (prefixes.some((prefix) => line.startsWith(prefix))) return this.parse(path, line);
      end = start - 1;
    }
    return undefined;
  }

  private *lines(path: string): Generator<[string, unknown[]]> {
    for (const line of this.read(path).split('\n')) if (line !== '') yield [line, this.parse(path, line)];
  }

  /** A bucket's text, checked to be what this process wrote there ('' for a bucket it never wrote). */
  private read(path: string): string {
    const written = this.written.get(path);
    if (!existsSync(path)) {
      if (written) throw this.damaged(path, 'the bucket file is missing (deleted under the running engine)');
      return '';
    }
    const bytes = readFileSync(path);
    if (!written) throw this.damaged(path, 'a bucket file the engine did not write');
    if (createHash('sha256').update(bytes).digest('hex') !== written.copy().digest('hex')) throw this.damaged(path, 'the bucket file is not what the engine wrote (altered, cut short or added to)');
    return bytes.toString('utf8');
  }

  private parse(path: string, line: string): unknown[] {
    const tab = line.lastIndexOf('\t');
    const json = line.slice(0, tab);
    if (tab < 0 || !sameSecret(line.slice(tab + 1), this.sealer.chain(MAC_DOMAIN, json))) throw this.damaged(path, 'a line whose MAC does not match it (altered or forged)');
    return JSON.parse(json) as unknown[];
  }

  private damaged(path: string, what: string): LedgerIntegrityError {
    // Kept by the next open only if every bucket is what built.json says: a damaged one is made anew.
    return new LedgerIntegrityError({ record: path }, `${what}: the directory ${this.dir} is made anew from the log when the ledger is next opened to write (restart the engine)`);
  }

  private bucket(key: string): string {
    return join(this.dir, `${createHash('sha256').update(key).digest('hex').slice(0, 2)}.jsonl`);
  }
}

/**
 * A Bloom filter over keys: `mayHold` is false only for a key never added, and true for about one
 * other key in 200,000 at 100,000 added (one in 50 at a million: then the bucket is read, as
 * without a filter). Its size is fixed (1 MiB), so an engine that lets go of more groups keeps no
 * more memory. Four bits a key, by double hashing two 32-bit FNV-1a hashes of its UTF-16 code
 * units: a lookup costs less than the sha256 that names its bucket (a keyed hash is not needed:
 * keys are this ledger's own, and a collision only reads a bucket).
 */
export class KeyFilter {
  private readonly bits = new Uint8Array(KEY_FILTER_BITS / 8);

  add(key: string): void {
    const [first, step] = hashes(key);
    for (let i = 0, bit = first; i < KEY_FILTER_HASHES; i++, bit = (bit + step) >>> 0) {
      const at = bit & (KEY_FILTER_BITS - 1);
      this.bits[at >>> 3] = this.bits[at >>> 3]! | (1 << (at & 7));
    }
  }

  mayHold(key: string): boolean {
    const [first, step] = hashes(key);
    for (let i = 0, bit = first; i < KEY_FILTER_HASHES; i++, bit = (bit + step) >>> 0) {
      const at = bit & (KEY_FILTER_BITS - 1);
      if ((this.bits[at >>> 3]! & (1 << (at & 7))) === 0) return false;
    }
    return true;
  }
}

const KEY_FILTER_BITS = 1 << 23;
const KEY_FILTER_HASHES = 4;

/** Two 32-bit FNV-1a hashes of `key`, from two offset bases (the second made odd, a step for double hashing). */
function hashes(key: string): [number, number] {
  let first = 0x811c9dc5;
  let second = 0x01000193 ^ 0x5bd1e995;
  for (let i = 0; i < key.length; i++) {
    const unit = key.charCodeAt(i);
    first = Math.imul(first ^ unit, 0x01000193);
    second = Math.imul(second ^ unit, 0x01000193);
  }
  return [first >>> 0, (second | 1) >>> 0];
}

// An approval id's line goes to its own bucket (found by the id alone); the prefix keeps it apart from a group's key.
const approvalBucketKey = (approvalId: string) => `approval:${approvalId}`;

function groupOf([, group, items, status, createdAt, approvals]: GroupLine): ColdGroup {
  return {
    group,
    items: items.map(([pk, sk, offset, bytes, seal, hash]) => ({ pk, sk, offset, bytes, seal, ...(hash !== undefined && { hash }) })),
    ...(status !== undefined && createdAt !== undefined && { run: { status, createdAt } }),
    approvals: approvals ?? [],
  };
}
