import { randomBytes } from 'node:crypto';
import type { Clock } from '../lambdas/shared/ports.js';

/**
 * Tickets for the console's event stream. A browser's EventSource cannot send a header, and the
 * session token must never ride in a cookie (a browser sends the cookies of 127.0.0.1 to every
 * port of it, so another local user's server would collect them). So the page, holding the token,
 * asks for a ticket with its header and opens the stream with the ticket in the query:
 *
 *   GET /api/stream-ticket   (x-savepoint-token)  ─► { ticket }     issued, expires in TICKET_TTL_MS
 *   GET /api/events?ticket=…                      ─► the stream     the ticket is spent: used once
 *
 * A ticket lives only in the memory of the console that issued it (bound to its port and its
 * start), opens one stream, and is worthless once used or expired: whoever sees it afterwards (a
 * log, a history entry) holds nothing.
 */

export const TICKET_TTL_MS = 30_000;
/** Tickets outstanding at once: a page takes one per (re)connection, so more is a client gone wrong. */
const MAX_OUTSTANDING = 100;

export interface StreamTickets {
  /** A new ticket, valid once until `expiresAt`. */
  issue(): { ticket: string; expiresAt: string };
  /** Whether `ticket` was issued here, is unused and unexpired; it is spent either way. */
  redeem(ticket: string): boolean;
}

export function streamTickets(clock: Clock, ttlMs = TICKET_TTL_MS): StreamTickets {
  const outstanding = new Map<string, number>(); // ticket → expires at (ms)
  const dropExpired = (now: number) => {
    for (const [ticket, expiresAt] of outstanding) if (expiresAt <= now) outstanding.delete(ticket);
  };
  return {
    issue() {
      const now = clock.now().getTime();
      dropExpired(now);
      // The oldest goes first: a page that lost its stream asks again, and its newest ticket is the one it uses.
      if (outstanding.size >= MAX_OUTSTANDING) outstanding.delete(outstanding.keys().next().value!);
      const ticket = randomBytes(32).toString('base64url');
      outstanding.set(ticket, now + ttlMs);
      return { ticket, expiresAt: new Date(now + ttlMs).toISOString() };
    },
    redeem(ticket) {
      // A map lookup by the ticket itself: its 256 random bits, not the comparison's timing, keep it unguessable.
      const expiresAt = outstanding.get(ticket);
      outstanding.delete(ticket);
      return expiresAt !== undefined && clock.now().getTime() < expiresAt;
    },
  };
}
