import type { IncomingMessage, ServerResponse } from 'node:http';
import type { StreamResponse } from '../../lambdas/adapters/run-events-http.js';

/**
 * A Node HTTP response as the run events route's transport (lambdas/adapters/run-events-http.ts):
 * what Lambda's response stream is on AWS. Each frame is written as it comes (no buffering: the
 * socket's Nagle delay is off), and the route is told when the client goes away.
 */
export function nodeStreamResponse(request: IncomingMessage, response: ServerResponse): StreamResponse {
  return {
    refuse(status, message) {
      response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ message }));
    },
    open(headers) {
      response.socket?.setNoDelay(true);
      // The headers go out with the first write (the preamble, or the first events), in one packet.
      response.writeHead(200, headers);
      return {
        write: (chunk) => void (response.writableEnded || response.write(chunk)),
        end: () => void (response.writableEnded || response.end()),
      };
    },
    onClose(stop) {
      if (response.writableEnded || request.socket.destroyed) return stop();
      response.on('close', stop);
    },
  };
}
