import type { IncomingMessage } from 'node:http';

/**
 * A request body of at most `maxBytes`, or undefined when it is larger. A larger body is still
 * read to its end, without keeping it: answering (413) while the client is still sending makes
 * its connection close on unread data, and the client sees a reset instead of the answer. Reading
 * costs no memory, and Node's `requestTimeout` (5 minutes) bounds a client that never stops.
 */
export async function readBoundedBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size <= maxBytes) chunks.push(chunk);
  }
  return size > maxBytes ? undefined : Buffer.concat(chunks);
}
