import type { IncomingMessage } from 'node:http';
/**
 * A request body of at most `maxBytes`, or undefined when it is larger. A larger body is still
 * read to its end, without keeping it: answering (413) while the client is still sending makes
 * its connection close on unread data, and the client sees a reset instead of the answer. Reading
 * costs no memory, and Node's `requestTimeout` (5 minutes) bounds a client that never stops.
 */
export declare function readBoundedBody(request: IncomingMessage, maxBytes: number): Promise<Buffer | undefined>;
