/**
 * A DynamoDB write that committed but whose answer was lost: DynamoDB may answer 500
 * InternalServerError (a server error, to retry) whether or not the write was applied, or the connection
 * may drop (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Programming.Errors.html).
 * The SDK retries both by itself, with the same request, and the retry of a conditional write meets
 * the write that landed:
 *
 *   PutItem IF #seal = :read ─► committed, answer lost ─► SDK retry ─► ConditionalCheckFailed
 *                                                                        └─ the item holds the seal this put wrote: it landed
 *   DeleteItem IF #seal = :read ─► deleted, answer lost ─► SDK retry ─► ConditionalCheckFailed
 *                                                                        └─ the item is gone: it landed
 *
 * Without this the ledger would read its own write back as another writer's and run the rule again
 * on it: a call completed would be "not in flight", a claim would take its own for another's and
 * wait out its lease, a step counted would answer "not counted", a prune would take a run it had
 * deleted for one that changed. TransactWriteItems needs none of it: the SDK sends its retries with
 * the same ClientRequestToken, which DynamoDB answers as the first. The embedded ledger writes in
 * its own process: it has no answer to lose.
 */

/**
 * Whether a write refused on its condition (`error`) was refused because of itself: only after
 * the SDK retried (`$metadata.attempts` > 1; a first attempt refused was refused by another
 * writer), and only when the item holds now what the write left (`written`: the seal a put wrote,
 * the seal covering the item's key and every attribute; undefined for a delete). The update is
 * then done, as its answer would have said.
 */
export async function landedEarlier(error: { $metadata?: { attempts?: number } }, written: unknown, sealNow: () => Promise<unknown>): Promise<boolean> {
  if ((error.$metadata?.attempts ?? 1) <= 1) return false;
  return (await sealNow()) === written;
}
