import { createHash } from 'node:crypto';
import { TerminalError } from '../shared/errors.js';
import type { BlobStore, EffectLedger } from './ledger.js';
import type { ToolCallRecord } from '../records/ledger-records.js';

/**
 * Tool results too large for one ledger item, stored by reference.
 *
 * DynamoDB refuses an item over 400 KB, and Step Functions a payload over 256 KB. A tool's result
 * never travels in the payload (only pointers do), but it is recorded on the call's item. So a
 * result over `RESULT_LIMIT_BYTES` is split into chunks of at most `CHUNK_BYTES` (each its own
 * item, `BlobStore.putBlob`, keyed by the content's SHA-256, so a retried step writes the same items
 * again), and the call records a reference in place of the text:
 *
 *   result = "blob:v1:<sha256 hex>:<bytes>"
 *
 * A tool's result is always JSON text (CallTool stringifies it), which never starts with `blob:`,
 * so a reference cannot be mistaken for a result. Readers resolve it (`resolveResults`), and the
 * digest is checked on every read: a missing or damaged chunk is named, never passed on.
 *
 * A result cut for the model (`cutResult`: a tool's `maxResultTokens`) is JSON that holds a
 * reference too, `stored`, to the whole result. Every reference, the result's own and a cut's,
 * resolves under the owner of the record that holds it: a record copied to another run (a later
 * run of a business key answered from the effect, a fork's copy of its parent's calls: `copyResult`)
 * has what it references copied to that run's blobs.
 *
 * The chunks are their owner's, and go with it: a run's (`savepoint prune` removes them with the
 * run), or a business-key effect's: the effect's record outlives the run that made it, so the
 * result it records, and the whole of one cut, is stored under the effect too (`storeCallResult`),
 * for the later runs of its key.
 */

/** Results above this many UTF-8 bytes are stored by reference. Well under 400 KB with the call's other fields. */
export const RESULT_LIMIT_BYTES = 64 * 1024;
/** Bytes of text per chunk item: under 400 KB with its key and attribute names. */
export const CHUNK_BYTES = 256 * 1024;

const PREFIX = 'blob:v1:';
const REF = /^blob:v1:([0-9a-f]{64}):(\d+)$/;

export interface BlobRef {
  sha256: string;
  bytes: number;
}

/** A chunk that is missing, or chunks that do not hash to the reference: the ledger is damaged. `owner`: whose, e.g. `run r1`, `effect <key>`. */
export class BlobIntegrityError extends TerminalError {
  constructor(owner: string, ref: BlobRef, what: string) {
    super(`ledger integrity: ${owner}, stored tool result ${ref.sha256} (${ref.bytes} bytes) fails verification: ${what}`);
  }
}

export function parseBlobRef(result: string | undefined): BlobRef | undefined {
  const match = result === undefined || !result.startsWith(PREFIX) ? null : REF.exec(result);
  return match ? { sha256: match[1]!, bytes: Number(match[2]) } : undefined;
}

/** Splits `text` into pieces of at most `maxBytes` UTF-8 bytes, never inside a character. */
export function splitUtf8(text: string, maxBytes = CHUNK_BYTES): string[] {
  const buffer = Buffer.from(text, 'utf8');
  const chunks: string[] = [];
  let start = 0;
  while (start < buffer.length) {
    let end = Math.min(start + maxBytes, buffer.length);
    // Back off continuation bytes (10xxxxxx): each chunk decodes on its own.
    while (end < buffer.length && end > start + 1 && (buffer[end]! & 0xc0) === 0x80) end--;
    chunks.push(buffer.subarray(start, end).toString('utf8'));
    start = end;
  }
  return chunks;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/**
 * What the call record holds for `result`: the text itself, or (over `limit` bytes) a reference to
 * chunks written first. Written before the call record, so a record never points at nothing.
 */
export async function storeResult(ledger: BlobStore, runId: string, result: string, limit = RESULT_LIMIT_BYTES): Promise<string> {
  const bytes = Buffer.byteLength(result, 'utf8');
  if (bytes <= limit) return result;
  const digest = sha256(result);
  await ledger.putBlob(runId, digest, splitUtf8(result));
  return `${PREFIX}${digest}:${bytes}`;
}

/** The text a reference points at, verified against its digest and size. */
export async function readResult(ledger: BlobStore, runId: string, ref: BlobRef): Promise<string> {
  return verified(await ledger.getBlob(runId, ref.sha256), ref, `run ${runId}`);
}

/**
 * `readResult`, or undefined when the run holds no chunk of it: for a reference a run's record may
 * hold to chunks it never held, which an earlier version wrote (a cut copied without its whole:
 * `copyCut`). Chunks there that do not verify are damage all the same (BlobIntegrityError).
 */
export async function keptResult(ledger: BlobStore, runId: string, ref: BlobRef): Promise<string | undefined> {
  const chunks = await ledger.getBlob(runId, ref.sha256);
  return chunks.length === 0 ? undefined : verified(chunks, ref, `run ${runId}`);
}

/**
 * `storeResult` for a call's result, or for the whole of one cut (`cutResult`'s `store`); one that
 * completes a business-key effect (`effectKey`), stored by reference, is stored under the effect as
 * well (EffectLedger `putEffectBlob`): for the later runs of its key, which are answered from the
 * effect's record after the run that made it is pruned.
 */
export async function storeCallResult(ledger: BlobStore & Pick<EffectLedger, 'putEffectBlob'>, runId: string, result: string, limit = RESULT_LIMIT_BYTES, effectKey?: string): Promise<string> {
  const stored = await storeResult(ledger, runId, result, limit);
  const ref = parseBlobRef(stored);
  if (ref && effectKey !== undefined) await ledger.putEffectBlob(effectKey, ref.sha256, splitUtf8(result));
  return stored;
}

/** The text of an effect's result stored by reference, from the chunks under the effect, verified; undefined when there are none (an earlier version stored them with the run that made the effect only). */
export async function readEffectResult(ledger: Pick<EffectLedger, 'getEffectBlob'>, key: string, ref: BlobRef): Promise<string | undefined> {
  const chunks = await ledger.getEffectBlob(key, ref.sha256);
  return chunks.length === 0 ? undefined : verified(chunks, ref, `effect ${key}`);
}

/**
 * `result`, another owner's (an effect's record, a fork's parent's call), as run `runId` records
 * it: each text it stores by reference — the result itself, and the whole of a cut result — read
 * with `read` and stored in the run's own blobs, so that its references resolve under the run
 * (`readResult`). undefined when the result itself is no longer kept; a cut whose whole is no
 * longer kept says so in place of its reference (`unkept`).
 */
export async function copyResult(ledger: BlobStore, runId: string, result: string, read: (ref: BlobRef) => Promise<string | undefined>): Promise<string | undefined> {
  const ref = parseBlobRef(result);
  const text = ref ? await read(ref) : result;
  if (text === undefined) return undefined;
  return storeResult(ledger, runId, await copyCut(ledger, runId, text, read), ref ? 0 : undefined);
}

/**
 * `text`, a result's own text (never a reference), as run `runId` holds it: when it is a cut, the
 * whole its `stored` names is read with `read` and stored in the run's blobs, so the reference
 * resolves under the run; a whole no longer kept (`read` answers undefined) is said in its place
 * (`unkept`). Any other text is itself. What `copyResult` does to the text, for a caller that hands
 * the text on (a fork's tool answering from its parent's record: runs/fork.ts) rather than recording it.
 */
export async function copyCut(ledger: BlobStore, runId: string, text: string, read: (ref: BlobRef) => Promise<string | undefined>): Promise<string> {
  const cut = cutOf(text);
  if (!cut) return text;
  const whole = await read(cut.ref);
  if (whole === undefined) return unkept(cut);
  await storeResult(ledger, runId, whole, 0);
  return text;
}

/**
 * A result cut to at most `maxBytes` UTF-8 bytes (so at most that many tokens) of JSON: its head,
 * its size, and the reference `store` keeps the whole of it under. A result that fits is itself.
 */
export async function cutResult(result: string, maxBytes: number, store: (whole: string) => Promise<string>): Promise<string> {
  const bytes = Buffer.byteLength(result, 'utf8');
  if (bytes <= maxBytes) return result;
  const stored = await store(result);
  // Escaping can grow the head inside the JSON: shrink it by the excess until the whole fits.
  let room = maxBytes;
  for (;;) {
    const head = splitUtf8(result, Math.max(1, room))[0] ?? '';
    const shown = JSON.stringify({ truncated: true, bytes, head, stored } satisfies Cut);
    const over = Buffer.byteLength(shown, 'utf8') - maxBytes;
    if (over <= 0 || room <= 1) return shown;
    room -= over;
  }
}

/** What the model is shown of a cut result (`cutResult`): `stored` is null once the whole is no longer kept (`unkept`). */
interface Cut {
  truncated: true;
  bytes: number;
  head: string;
  stored: string | null;
  message?: string;
}

const CUT_START = '{"truncated":true,';

/** `text` as a cut result with the reference to its whole; undefined for any other text (a tool's own JSON that only looks like one included: its fields and their order are `cutResult`'s, and the reference is to as many bytes). */
function cutOf(text: string): { cut: Cut; ref: BlobRef } | undefined {
  if (!text.startsWith(CUT_START)) return undefined;
  const cut = JSON.parse(text) as Cut;
  const ref = typeof cut.stored === 'string' ? parseBlobRef(cut.stored) : undefined;
  if (!ref || ref.bytes !== cut.bytes || Object.keys(cut).join() !== 'truncated,bytes,head,stored') return undefined;
  return { cut, ref };
}

/**
 * A cut whose whole is no longer kept (its owner pruned, and an earlier version copied it nowhere): its head, and no reference to
 * nothing. No longer than the cut: `null` and the message take fewer bytes than the reference they replace.
 */
function unkept({ cut }: { cut: Cut }): string {
  return JSON.stringify({ ...cut, stored: null, message: 'the whole of this result is no longer kept: only its head is' } satisfies Cut);
}

function verified(chunks: readonly string[], ref: BlobRef, owner: string): string {
  if (chunks.length === 0) throw new BlobIntegrityError(owner, ref, 'no chunk found');
  const text = chunks.join('');
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes !== ref.bytes) throw new BlobIntegrityError(owner, ref, `the chunks hold ${bytes} bytes`);
  if (sha256(text) !== ref.sha256) throw new BlobIntegrityError(owner, ref, 'the chunks do not match the digest');
  return text;
}

/**
 * The calls with every stored-by-reference result read back (and verified). `cache` keeps what a
 * container has read: a result never changes once recorded, so each is fetched once.
 */
export async function resolveResults<T extends Pick<ToolCallRecord, 'runId' | 'result'>>(
  ledger: BlobStore,
  calls: readonly T[],
  cache?: Map<string, string>,
): Promise<T[]> {
  // Most results are held inline: then no read and no promise per call (a step resolves every
  // completed call of its run, and a run holds hundreds).
  if (!calls.some((call) => call.result !== undefined && call.result.startsWith(PREFIX))) return [...calls];
  return Promise.all(
    calls.map(async (call) => {
      const ref = parseBlobRef(call.result);
      if (!ref) return call;
      let text = cache?.get(ref.sha256);
      if (text === undefined) {
        text = await readResult(ledger, call.runId, ref);
        cache?.set(ref.sha256, text);
      }
      return { ...call, result: text };
    }),
  );
}
