import { createHmac, randomBytes } from 'node:crypto';
import { sameSecret } from '../shared/same-secret.js';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { LedgerIntegrityError } from '../shared/errors.js';
import type { Ledger } from './ledger.js';

export { SEAL_KEY_FILE } from './seal-key-file.js';
/** The length of the keys `readOrCreateKeyFile` makes, and the least `hmacSealer` takes. */
export const SEAL_KEY_BYTES = 32;
import { approvalSkOf, type ApprovalRecord } from '../records/ledger-records.js';
import { readingFile } from '../shared/file-errors.js';

/**
 * Sealed records: what makes the ledger tamper-evident.
 *
 * Every item a ledger stores carries `seal` = HMAC-SHA256 (under the ledger's seal key) over its
 * key (pk = RUN#<runId>, sk = the record's kind and position: TURN#0003, TURN#0003#CALL#01, …) and
 * every sealed attribute, in a canonical JSON. So a record whose content was altered, that was
 * moved to another key (swapped turns), or that was written without the key (forged) fails. The
 * run record's content holds the code fingerprint and the counters, so they are sealed with it;
 * the counters are also the run's sealed head: `verifyRun` checks that the turns and calls they
 * count exist, which is how a deleted or truncated record is found.
 *
 * The embedded ledger's log seals each line's item over its own text instead, under the same key
 * (sealed-log.ts `textSeal`): the same key and attributes covered, without the canonical form.
 *
 * Updates in place (a claim completed, counters added, a decision) rewrite the whole item with a
 * new seal; an implementation must check the seal of what it updates first, so that a write never
 * launders a damaged record into a sealed one.
 */
export interface LedgerSealer {
  /** The seal of one item. `attributes` may hold storage attributes (listed in UNSEALED: left out). */
  seal(key: ItemKey, attributes: Record<string, unknown>): string;
  /** Throws LedgerIntegrityError naming the record when `seal` is not the seal of the item. */
  verify(key: ItemKey, attributes: Record<string, unknown>, seal: unknown): void;
  /** The embedded ledger's log chain: the MAC of one line, bound to the MAC of the line before it. */
  chain(previous: string, line: string): string;
}

export interface ItemKey {
  pk: string;
  sk: string;
}

/**
 * Attributes outside the seal: the seal itself; `expiresAt` (storage bookkeeping: DynamoDB's TTL);
 * `taskToken` (approval items written before tokens moved to their own `TOKEN#` items still carry
 * it, outside their seal; the ledger never returns it).
 */
export const UNSEALED_ATTRIBUTES: ReadonlySet<string> = new Set(['seal', 'expiresAt', 'taskToken']);

/** The sealer of a 32-byte key. The seal and chain keys are derived from it, one per purpose. */
export function hmacSealer(key: Uint8Array): LedgerSealer {
  if (key.length < SEAL_KEY_BYTES) throw new Error(`the ledger seal key must be at least ${SEAL_KEY_BYTES} bytes, got ${key.length}`);
  const sealKey = createHmac('sha256', key).update('savepoint ledger seal v1').digest();
  const chainKey = createHmac('sha256', key).update('savepoint ledger chain v1').digest();
  const seal = (item: ItemKey, attributes: Record<string, unknown>) => createHmac('sha256', sealKey).update(sealedText(item, attributes)).digest('base64url');
  return {
    seal,
    verify(item, attributes, given) {
      const where = recordOf(item);
      if (typeof given !== 'string' || given.length === 0) throw new LedgerIntegrityError(where, 'it carries no seal (written without the ledger key)');
      if (!sameSecret(given, seal(item, attributes))) {
        throw new LedgerIntegrityError(where, 'its seal does not match its content and key (altered, moved or forged)');
      }
    },
    chain: (previous, line) => createHmac('sha256', chainKey).update(previous).update('\n').update(line).digest('base64url'),
  };
}

/** Where a record is, for messages: its run (when it belongs to one) and its key. */
export function recordOf(key: ItemKey): { runId?: string; record: string } {
  return key.pk.startsWith('RUN#') ? { runId: key.pk.slice(4), record: key.sk } : { record: `${key.pk}/${key.sk}` };
}

/**
 * The text a seal covers: `canonicalJson([pk, sk, sealed])`, where `sealed` is `attributes`
 * without those outside the seal (UNSEALED_ATTRIBUTES) and those undefined. Written in one pass
 * over `attributes`, not over a copy of them made first: it runs over every item each write and
 * each read that checks a seal (`savepoint replay` checks the ~250 records of a run as it opens
 * it: issue 38). The text must never change, or every sealed ledger fails to verify: a top-level
 * `__proto__` key is left out, as the copy by assignment this replaced left it out (an assignment
 * to `__proto__` sets the copy's prototype, not a key). test/unit/canonical-json.test.ts holds
 * the two to each other.
 */
export function sealedText(item: ItemKey, attributes: Record<string, unknown>): string {
  return `[${jsonOf(item.pk) ?? 'null'},${jsonOf(item.sk) ?? 'null'},${objectJson(attributes, OUTSIDE_SEAL)}]`;
}
const OUTSIDE_SEAL: ReadonlySet<string> = new Set([...UNSEALED_ATTRIBUTES, '__proto__']);

/**
 * JSON with object keys sorted and sets as sorted arrays (DynamoDB returns a string set as a Set,
 * in no order), so that the same item read back from any store has the same text.
 */
export function canonicalJson(value: unknown): string {
  // Built as one string, without the intermediate arrays: it runs over every record each write and
  // each read that checks a seal. Strings, finite numbers and booleans are written in place, and a
  // key's quoted text is remembered (records repeat their keys), not made again by JSON.stringify.
  if (typeof value !== 'object' || value === null) return JSON.stringify(value) ?? 'null';
  if (value instanceof Set) return canonicalJson([...value].sort());
  if (Array.isArray(value)) {
    let out = '[';
    for (let index = 0; index < value.length; index++) {
      if (index > 0) out += ',';
      out += jsonOf(value[index]) ?? 'null';
    }
    return `${out}]`;
  }
  return objectJson(value as Record<string, unknown>);
}

/** An object's canonical text: its keys sorted, those `left` out and those undefined left out. */
function objectJson(value: Record<string, unknown>, left?: ReadonlySet<string>): string {
  const keys = Object.keys(value);
  // Records keep their fields in the order they were written, often already sorted.
  if (!isSorted(keys)) keys.sort();
  let out = '{';
  for (const key of keys) {
    if (left?.has(key)) continue;
    const field = jsonOf(value[key]);
    if (field === undefined) continue;
    if (out.length > 1) out += ',';
    out += quotedKey(key);
    out += ':';
    out += field;
  }
  return `${out}}`;
}

/** A value's canonical text; undefined for undefined (a field left out, an array entry written as null). */
function jsonOf(value: unknown): string | undefined {
  switch (typeof value) {
    case 'undefined':
      return undefined;
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      // JSON.stringify's own text for a finite number (-0 included: "0"); NaN and ±Infinity are null.
      return Number.isFinite(value) ? String(value) : 'null';
    default:
      return canonicalJson(value);
  }
}

function isSorted(keys: readonly string[]): boolean {
  for (let index = 1; index < keys.length; index++) if (keys[index - 1]! > keys[index]!) return false;
  return true;
}

/** A key's JSON text, remembered for the first QUOTED_KEYS keys seen (a fixed bound: ids used as keys do not grow it). */
function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < QUOTED_KEYS) quotedKeys.set(key, quoted);
  }
  return quoted;
}

const QUOTED_KEYS = 2_048;
const quotedKeys = new Map<string, string>();

/**
 * A 32-byte key kept in a file readable by its owner only (mode 0600), made on first use: the
 * local stand-in for a key in Secrets Manager. It detects damage to the state directory, not a
 * determined local attacker, who can read the key as well as the ledger.
 */
export function readOrCreateKeyFile(path: string): Buffer {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    return readingFile(path, () => readFileSync(path));
  } catch {
    const made = randomBytes(SEAL_KEY_BYTES);
    // `wx`: two processes racing to make the key keep the first one's.
    try {
      writeFileSync(path, made, { mode: 0o600, flag: 'wx' });
      return made;
    } catch {
      return readingFile(path, () => readFileSync(path));
    }
  }
}

/** The sealer of a key kept as a secret string (Secrets Manager, generated by the stack: 64 characters). */
export function secretSealer(secretId: string, secret: unknown): LedgerSealer {
  if (typeof secret !== 'string' || secret.length < 32) throw new Error(`secret ${secretId}: expected at least 32 characters of ledger seal key`);
  return hmacSealer(Buffer.from(secret, 'utf8'));
}

/** A sealer with a random key, for a ledger that lives and dies in memory (tests). */
export function ephemeralSealer(): LedgerSealer {
  return hmacSealer(randomBytes(32));
}

/** What `verifyRun` checked, and what failed (empty: the run verifies). */
export interface RunVerification {
  runId: string;
  records: number;
  turns: number;
  calls: number;
  approvals: number;
  problems: string[];
}

/**
 * Verifies a whole run: every record's seal (each read verifies what it returns), and that the
 * records the run's sealed counters count are all there, in order: turns 1..n with none missing
 * (at least as many as `modelTurns`), as many completed calls as `toolCalls`, each call and
 * approval under a turn that exists. A StartRun that resumes a run, and `savepoint verify`, call it.
 */
export async function verifyRun(ledger: Pick<Ledger, 'getRun' | 'listConversation'>, runId: string, options: VerifyOptions = {}): Promise<RunVerification> {
  const report: RunVerification = { runId, records: 0, turns: 0, calls: 0, approvals: 0, problems: [] };
  const fail = (record: string, why: string) => report.problems.push(new LedgerIntegrityError({ runId, record }, why).message);
  let run;
  let conversation;
  try {
    run = await ledger.getRun(runId);
    if (!run) {
      fail('RUN', 'there is no run record');
      return report;
    }
    conversation = await ledger.listConversation(runId);
  } catch (error) {
    if ((error as Error).name !== 'Ledger.IntegrityError') throw error;
    report.problems.push((error as Error).message);
    return report;
  }
  const { turns, calls, approvals } = conversation;
  Object.assign(report, { turns: turns.length, calls: calls.length, approvals: approvals.length, records: 1 + turns.length + calls.length + approvals.length });
  const numbers = new Set(turns.map((turn) => turn.turn));
  for (let turn = 1; turn <= turns.length; turn++) {
    if (!numbers.has(turn)) fail(`TURN#${String(turn).padStart(4, '0')}`, `the record is missing (the run holds ${turns.length} turns, numbered up to ${Math.max(...numbers)})`);
  }
  if (turns.length < run.modelTurns) {
    fail(`TURN#${String(turns.length + 1).padStart(4, '0')}`, `the record is missing: the run counted ${run.modelTurns} model turns, the ledger holds ${turns.length}`);
  }
  const completed = calls.filter((call) => call.status === 'completed').length;
  if (completed < run.toolCalls) fail('TURN#…#CALL#…', `records are missing: the run counted ${run.toolCalls} tool calls, the ledger holds ${completed} completed`);
  for (const record of [...calls, ...approvals.filter((approval) => !approval.budget)]) {
    if (!numbers.has(record.turn)) fail(`TURN#${String(record.turn).padStart(4, '0')}`, `the record is missing (call ${record.call} of that turn exists)`);
  }
  for (const approval of approvals) {
    const why = await options.checkDecision?.(approval);
    if (why) fail(approvalSkOf(approval), why);
  }
  return report;
}

export interface VerifyOptions {
  /**
   * Checks a decided approval beyond its seal (its decision's signature, approvals/decision-mac.ts):
   * what is wrong with it, or undefined. The ledger holds no decision key, so the caller brings it.
   */
  readonly checkDecision?: (approval: ApprovalRecord) => Promise<string | undefined>;
}
