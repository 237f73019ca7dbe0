import { TerminalError } from '../shared/errors.js';
import type { BlobStore } from './ledger.js';
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
 */
/** Results above this many UTF-8 bytes are stored by reference. Well under 400 KB with the call's other fields. */
export declare const RESULT_LIMIT_BYTES: number;
/** Bytes of text per chunk item: under 400 KB with its key and attribute names. */
export declare const CHUNK_BYTES: number;
export interface BlobRef {
    sha256: string;
    bytes: number;
}
/** A chunk that is missing, or chunks that do not hash to the reference: the ledger is damaged. */
export declare class BlobIntegrityError extends TerminalError {
    constructor(runId: string, ref: BlobRef, what: string);
}
export declare function parseBlobRef(result: string | undefined): BlobRef | undefined;
/** Splits `text` into pieces of at most `maxBytes` UTF-8 bytes, never inside a character. */
export declare function splitUtf8(text: string, maxBytes?: number): string[];
/**
 * What the call record holds for `result`: the text itself, or (over `limit` bytes) a reference to
 * chunks written first. Written before the call record, so a record never points at nothing.
 */
export declare function storeResult(ledger: BlobStore, runId: string, result: string, limit?: number): Promise<string>;
/** The text a reference points at, verified against its digest and size. */
export declare function readResult(ledger: BlobStore, runId: string, ref: BlobRef): Promise<string>;
/**
 * The calls with every stored-by-reference result read back (and verified). `cache` keeps what a
 * container has read: a result never changes once recorded, so each is fetched once.
 */
export declare function resolveResults<T extends Pick<ToolCallRecord, 'runId' | 'result'>>(ledger: BlobStore, calls: readonly T[], cache?: Map<string, string>): Promise<T[]>;
