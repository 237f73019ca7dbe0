import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamResponse } from '../../lambdas/adapters/run-events-http.js';

/**
 * A Node HTTP response as the run events route's transport (lambdas/adapters/run-events-http.ts):
 * what Lambda's response stream is on AWS. Each frame is written as it comes (no buffering: the
 * socket's Nagle delay is off), and the route is told when the client goes away.
 *
 * The followers of a run are all written the same buffer (lambdas/runs/event-feed.ts), so it is
 * framed as an HTTP/1.1 chunk once (`chunkOf`) and that chunk written to each follower's socket as
 * it is: one socket write per follower per delivery, where the response's own `write` would frame
 * it again for each follower in four writes and a deferred flush (bench/events.ts).
 */
export function nodeStreamResponse(request: IncomingMessage, response: ServerResponse): StreamResponse {
  return {
    refuse(status, message) {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ message }));
    },
    nothingMore() {
      response.writeHead(204).end();
    },
    open(headers) {
      // A response that holds its socket (not one queued behind another on a kept-alive connection)
      // is written on it directly after its first write, which takes the headers out on it.
      const socket = response.socket;
      socket?.setNoDelay(true);
      // The headers go out with the first write (the preamble, or the first events), in one packet.
      response.writeHead(200, headers);
      let first = true;
      return {
        write: (chunk) => {
          if (response.writableEnded) return;
          if (first || !socket || socket.destroyed || !response.chunkedEncoding) return void ((first = false), response.write(chunk));
          socket.write(chunkOf(chunk));
        },
        end: () => void (response.writableEnded || response.end()),
      };
    },
    onClose(stop) {
      if (response.writableEnded || request.socket.destroyed) return stop();
      response.on('close', stop);
    },
  };
}

/** Each shared buffer's chunk, made by its first follower's write (weakly held: gone with the buffer). */
const chunks = new WeakMap<Buffer, Buffer>();

/** `bytes` as one chunk of a chunked HTTP/1.1 body: its length in hex, CRLF, the bytes, CRLF (RFC 9112, 7.1). */
function chunkOf(bytes: string | Buffer): Buffer {
  if (typeof bytes === 'string') return framed(Buffer.from(bytes, 'latin1'));
  let chunk = chunks.get(bytes);
  if (!chunk) chunks.set(bytes, (chunk = framed(bytes)));
  return chunk;
}

const CRLF = Buffer.from('\r\n', 'latin1');
const framed = (bytes: Buffer) => Buffer.concat([Buffer.from(`${bytes.length.toString(16)}\r\n`, 'latin1'), bytes, CRLF]);
