import { closeSync, openSync, readSync } from 'node:fs';
import * as z from 'zod';
import { CalendarDate, InvalidInputError, parseOrThrow } from 'savepoint';
import { Day, Order, Payment, Refund, RefundRequest } from './domain.js';

/**
 * What a day file (`--world-data`) may hold: a Day whose date is on the calendar and whose fields fit what the
 * payments provider takes and serves back. Unbounded, a long field made the run fail deep inside
 * (a tool result too large for its ledger item: `ValidationException`, or `Unknown: UnknownError`
 * from DynamoDB) after the day had already been kept as the state directory's; here it fails
 * before anything starts, naming the field.
 */

/** Larger than any day the provider is meant to serve (the sample is 12 KB). */
export const MAX_DAY_FILE_BYTES = 1024 * 1024;
/** Ids like Stripe's (`re_3N…`, ~30 characters). */
const Id = z.string().min(1).max(64);
/** A refund's reason, as the provider stores it (the simulated policy clips to the same 500). */
const Reason = z.string().max(500);
/** An ISO timestamp. */
const Timestamp = z.string().max(40);
/** The provider's largest amount: $999,999.99. */
const Amount = z.number().int().nonnegative().max(99_999_999);
/** Enough for a day; all of a day's refund requests come back in one tool result, one ledger item. */
const MAX_ITEMS = 200;

const DayFile = z.object({
  date: CalendarDate,
  refundRequests: z.array(RefundRequest.extend({ id: Id, orderId: Id, paymentId: Id, amountCents: Amount, reason: Reason, requestedAt: Timestamp })).max(MAX_ITEMS),
  orders: z
    .array(
      Order.extend({
        id: Id,
        customerId: Id,
        totalCents: Amount,
        items: z.array(z.object({ sku: Id, quantity: z.number().int().positive().max(10_000), unitCents: Amount })).max(100),
      }),
    )
    .max(MAX_ITEMS),
  payments: z.array(Payment.omit({ refundedCents: true, status: true, refunds: true }).extend({ id: Id, orderId: Id, amountCents: Amount })).max(MAX_ITEMS),
  refunds: z.array(Refund.extend({ id: Id, paymentId: Id, amountCents: Amount, reason: Reason, refundRequestId: Id, createdAt: Timestamp })).max(MAX_ITEMS),
});

/**
 * Reads and checks a day file. Every way it can be wrong — unreadable, empty, too large, not JSON,
 * not a day, a field too large — is invalid input (exit 2) naming the file, and the field when
 * there is one.
 */
export function loadDay(path: string): Day {
  const text = readDayFile(path);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    throw new InvalidInputError(`day file ${path} is not JSON: ${(error as Error).message}`);
  }
  // Both: the bounds and the calendar of a day file, and the domain's own rules.
  return parseOrThrow(Day, parseOrThrow(DayFile, raw, `day file ${path}`), `day file ${path}`);
}

function readDayFile(path: string): string {
  let bytes: Buffer;
  try {
    bytes = readAtMost(path, MAX_DAY_FILE_BYTES + 1);
  } catch (error) {
    throw new InvalidInputError(`cannot read the day file ${path}: ${fileError(error)}`, { cause: error });
  }
  if (bytes.length > MAX_DAY_FILE_BYTES) throw new InvalidInputError(`day file ${path} is larger than the ${MAX_DAY_FILE_BYTES} bytes a day file may have`);
  const text = bytes.toString('utf8');
  if (text.trim().length === 0) throw new InvalidInputError(`day file ${path} is empty`);
  return text;
}

/**
 * The first `limit` bytes of a file. Not statSync + readFileSync: a pipe or a device
 * (`--world-data /dev/zero`) has no size and never ends.
 */
function readAtMost(path: string, limit: number): Buffer {
  const fd = openSync(path, 'r');
  try {
    const buffer = Buffer.alloc(limit);
    let length = 0;
    while (length < limit) {
      const read = readSync(fd, buffer, length, limit - length, null);
      if (read === 0) break; // end of file
      length += read;
    }
    return buffer.subarray(0, length);
  } finally {
    closeSync(fd);
  }
}

const REASONS: Record<string, string> = { ENOENT: 'no such file or directory', EISDIR: 'it is a directory', EACCES: 'permission denied' };

/** An fs error as the end of a sentence. */
function fileError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  return (code && REASONS[code]) ?? (error as Error).message;
}
