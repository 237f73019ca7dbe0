import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { fileSync } from './file-sync.js';
import { LedgerIntegrityError } from '../shared/errors.js';
import { sameSecret } from '../shared/same-secret.js';
import type { Key } from './protocol.js';
import { recordOf, type LedgerSealer } from './seal.js';
import { readingFile } from '../shared/file-errors.js';

/**
 * The embedded ledger's file format: one JSON line per write,
 *
 *   {"pk":…,"sk":…,"record":{…},"hidden":{…},"seal":…,"chain":…}
 *
 * `seal` seals the item (its key, record and hidden attributes: `textSeal`); `chain` binds the line
 * to the one before it; `ledger.head` beside the log counts its lines (LogHead).
 */

/** Attributes the DynamoDB ledger keeps on an item but never returns; here, beside the record. */
export interface Hidden {
  /** Step keys counted into a run's counters (countStep). */
  countedSteps?: string[];
  /** Reasons of the guard events recorded on a run (recordGuardEvent). */
  guardReasons?: string[];
  /** In the pending-approvals index (a sparse GSI on DynamoDB). */
  pendingApproval?: true;
}

/**
 * One stored item. `json` is the record as written (what the log holds; like DynamoDB's
 * marshalling, it drops `undefined`); `record` is parsed from it, for the conditions to read. The
 * record is never handed out or changed: every read returns a deep copy.
 */
export interface Item<T = unknown> {
  readonly record: T;
  readonly json: string;
  readonly hidden: Hidden;
  /** The item's seal (over its key, record and hidden attributes). */
  readonly seal: string;
}

export interface LogEntry extends Key {
  record: unknown;
  hidden?: Hidden;
  seal: string;
  /** The log chain: MAC of this line (without `chain`) and the chain of the line before it. */
  chain: string;
}

/**
 * Checks an entry's item seal (its key, record and hidden attributes). `json`: its record's text
 * as `item` makes it (JSON.stringify of the record parsed), when the caller has it already.
 */
export function verifySeal(entry: LogEntry, sealer: LedgerSealer, json?: string): void {
  // A line written by 0.15.x or earlier: its seal is the one seal.ts makes, over the canonical JSON of the attributes.
  if (!entry.seal.startsWith(TEXT_SEAL)) return sealer.verify(entry, { ...(entry.record as object), ...(entry.hidden ?? {}) }, entry.seal);
  const hidden = entry.hidden ?? {};
  if (!sameSecret(entry.seal, textSeal(itemText(entry, json ?? JSON.stringify(entry.record), hidden), sealer))) {
    throw new LedgerIntegrityError(recordOf(entry), 'its seal does not match its content and key (altered, moved or forged)');
  }
}

/**
 * The seal a line carries (written after 0.15): `TEXT_SEAL` and the MAC of the item's text as the line
 * holds it (`itemText`: its key, record and hidden attributes, the line up to its seal), under the
 * chain key in a domain of its own (no chain, head, index or cold-store MAC is this). What 0.15
 * sealed instead, the canonical JSON of the attributes (seal.ts `sealedText`), was most of a
 * write's cost on disk (issue 38): the record's text is made for the line anyway. A reader checks
 * it over the text it makes again from the record parsed (`verifySeal`), so a record altered in any
 * way — or a line moved to another key — fails, as with the canonical seal; the text is the same
 * because the record's JSON round-trips exactly (JSON.stringify of what JSON.parse made of its
 * own output is that output). 0.15.x knows only the canonical rule: it finds these seals not
 * matching, so a log written to after 0.15 is not one 0.15.x can read (MIGRATING.md).
 */
export function textSeal(text: string, sealer: LedgerSealer): string {
  return `${TEXT_SEAL}${sealer.chain(TEXT_SEAL_DOMAIN, text)}`;
}

/** Marks a text seal: no canonical seal (base64url) holds a '.', so a seal is read by the rule it was made by. */
const TEXT_SEAL = 't.';
const TEXT_SEAL_DOMAIN = 'savepoint ledger item text v1';

/** An item's text in its line: `{"pk":…,"sk":…,"record":…,"hidden":…}` ("hidden" when it holds any), what `textSeal` seals. */
export function itemText(key: Key, json: string, hidden: Hidden): string {
  const hiddenText = Object.keys(hidden).length > 0 ? `,"hidden":${JSON.stringify(hidden)}` : '';
  return `{"pk":${JSON.stringify(key.pk)},"sk":${JSON.stringify(key.sk)},"record":${json}${hiddenText}}`;
}

/**
 * The log's chain, checked one line at a time (`next`), then against its head (`end`), over every
 * line's text (the chain covers each line's exact bytes, so a line that is not parsed is still checked).
 */
export class ChainCheck {
  private lines: number;
  private tip: string;
  private previousTip: string;

  /** `from`: the log's first `lines` lines are taken as checked already, ending in `tip` (a checkpoint: ledger-index.ts). */
  constructor(
    private readonly sealer: LedgerSealer,
    private readonly path: string,
    from: { lines: number; tip: string; previousTip: string } = { lines: 0, tip: '', previousTip: '' },
  ) {
    ({ lines: this.lines, tip: this.tip, previousTip: this.previousTip } = from);
  }

  /** Where the check is: the lines checked, the chain of the last one and of the one before it. */
  get position(): { lines: number; tip: string; previousTip: string } {
    return { lines: this.lines, tip: this.tip, previousTip: this.previousTip };
  }

  next(body: string, chain: string, key: Key): void {
    if (this.sealer.chain(this.tip, body) !== chain) {
      throw new LedgerIntegrityError(
        { record: `${this.path}:${this.lines + 1} (${key.pk}/${key.sk})` },
        'the line does not follow from the lines before it (altered, reordered or forged)',
      );
    }
    this.previousTip = this.tip;
    this.tip = chain;
    this.lines++;
  }

  /** Checks the lines read against `head`; returns the chain's tip. */
  end(head: LogHead): string {
    const { lines, sealer, path } = this;
    // One line more than the head counts: the process died between appending a line and counting it.
    const matched = (count: number, chain: string) => count >= 0 && head.matches(count, chain, sealer);
    if (!(!head.existed && lines === 0) && !matched(lines, this.tip) && !matched(lines - 1, this.previousTip)) {
      throw new LedgerIntegrityError(
        { record: path },
        !head.existed
          ? `the file holds ${lines} lines, but its head ${head.path} is missing`
          : lines < head.lines
            ? `the file holds ${lines} complete lines, but ${head.path} records ${head.lines}: ${head.lines - lines} were lost (truncated)`
            : `the file's ${lines} lines do not match ${head.path} (${head.lines} lines; one of the two was altered or replaced)`,
      );
    }
    return this.tip;
  }
}

/** A line's text split as the chain reads it: the body it covers, and its chain MAC (the last field). */
export function splitChained(text: string): { body: string; chain: string } | undefined {
  const at = text.lastIndexOf(CHAIN);
  if (at < 0 || !text.endsWith('"}')) return undefined;
  return { body: `${text.slice(0, at)}}`, chain: text.slice(at + CHAIN.length, -2) };
}

/** An item's line without its chain: its text (`itemText`) and its seal. */
export function line(key: Key, stored: Item): string {
  return sealedLine(itemText(key, stored.json, stored.hidden), stored.seal);
}

/** An item's text (`itemText`) with its seal, as the last field. */
export function sealedLine(text: string, seal: string): string {
  return `${text.slice(0, -1)},"seal":${JSON.stringify(seal)}}`;
}

const CHAIN = ',"chain":"';
/** The head's fixed width (its longest form, mid-compaction, is ~250 bytes). */
const HEAD_BYTES = 400;

/** A line with its chain MAC as the last field (so that the chained body is the line's own text). */
export function chained(body: string, chain: string): string {
  return `${body.slice(0, -1)}${CHAIN}${chain}"}`;
}

export function parseEntry(value: unknown, text: string): LogEntry {
  const entry = value as Partial<LogEntry> | null;
  if (typeof entry?.pk !== 'string' || typeof entry.sk !== 'string' || typeof entry.record !== 'object' || entry.record === null) {
    throw new Error('expected {"pk": string, "sk": string, "record": object}');
  }
  if (entry.hidden !== undefined && (typeof entry.hidden !== 'object' || entry.hidden === null)) throw new Error('"hidden" must be an object');
  const at = text.lastIndexOf(CHAIN);
  if (typeof entry.seal !== 'string' || typeof entry.chain !== 'string' || at < 0) {
    throw new LedgerIntegrityError({ record: `${entry.pk}/${entry.sk}` }, 'the line carries no seal and chain (written without the ledger key)');
  }
  return entry as LogEntry;
}

/**
 * The log's head, `ledger.head` beside it: how many lines the log holds and the chain of the last
 * one, MACed. Rewritten in place after every append (one small write at offset 0); without it, a
 * log cut at a line boundary would replay as a shorter, valid-looking history.
 */
export class LogHead {
  private constructor(
    readonly path: string,
    /** Opened on the first write: a ledger refused on open leaves no head behind. */
    private fd: number | undefined,
    readonly existed: boolean,
    private state: { lines: number; chain: string; mac: string; previous?: { lines: number; chain: string } },
    /** fdatasync after every write: the head reaches the disk before the write it counts is acknowledged. */
    private readonly fsync = false,
  ) {}

  static open(path: string, options: { fsync?: boolean } = {}): LogHead {
    const text = existsSync(path) ? readingFile(path, () => readFileSync(path, 'utf8')).trim() : '';
    // An empty head: the process died between creating it and its first write (nothing was logged yet).
    const existed = text !== '';
    let state = { lines: 0, chain: '', mac: '' } as LogHead['state'];
    if (text !== '') {
      try {
        state = JSON.parse(text) as LogHead['state'];
        if (!Number.isInteger(state.lines) || typeof state.chain !== 'string' || typeof state.mac !== 'string') throw new Error('bad shape');
      } catch {
        throw new LedgerIntegrityError({ record: path }, 'the file is not a ledger head (expected {"lines", "chain", "mac"})');
      }
    }
    return new LogHead(path, existed ? openSync(path, 'r+') : undefined, existed, state, options.fsync ?? false);
  }

  get lines(): number {
    return this.state.lines;
  }

  /** Whether the head must be rewritten for a log of `lines` lines ending in `chain` (new, one line behind, or mid-compaction). */
  needsWrite(lines: number, chain: string, sealer: LedgerSealer): boolean {
    return !this.existed || this.state.previous !== undefined || !this.matches(lines, chain, sealer) || this.state.lines !== lines;
  }

  /** Whether the log's chain after `lines` lines is what the head (or, mid-compaction, its previous log) records. */
  matches(lines: number, chain: string, sealer: LedgerSealer): boolean {
    const { previous } = this.state;
    if (sealer.chain(this.state.chain, `head ${this.state.lines}${previous ? ` ${previous.lines} ${previous.chain}` : ''}`) !== this.state.mac) return false;
    return (lines === this.state.lines && chain === this.state.chain) || (previous !== undefined && lines === previous.lines && chain === previous.chain);
  }

  write(lines: number, chain: string, sealer: LedgerSealer, previous?: { lines: number; chain: string }): void {
    const mac = sealer.chain(chain, `head ${lines}${previous ? ` ${previous.lines} ${previous.chain}` : ''}`);
    this.state = { lines, chain, mac, ...(previous && { previous }) };
    // Padded to a fixed width, so that a shorter head never leaves the end of a longer one behind.
    const text = JSON.stringify(this.state).padEnd(HEAD_BYTES - 1, ' ');
    this.fd ??= openSync(this.path, 'w+', 0o600);
    writeSync(this.fd, `${text}\n`, 0);
    if (this.fsync) fileSync.data(this.fd);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
  }
}
