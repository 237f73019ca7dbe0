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
export declare const TICKET_TTL_MS = 30000;
export interface StreamTickets {
    /** A new ticket, valid once until `expiresAt`. */
    issue(): {
        ticket: string;
        expiresAt: string;
    };
    /** Whether `ticket` was issued here, is unused and unexpired; it is spent either way. */
    redeem(ticket: string): boolean;
}
export declare function streamTickets(clock: Clock, ttlMs?: number): StreamTickets;
