import type { SavepointClient } from '../client/index.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import { type RunRecord } from '../lambdas/records/ledger-records.js';
import { type Clock } from '../lambdas/shared/ports.js';
import type { AslDefinition } from '../local/template/asl.js';
import { type HistorySource } from './history.js';
/**
 * `savepoint console`: a small web app on loopback to watch runs and steer them. It reads through
 * the ledger and the execution history, and steers through the client (the same routes the CLI
 * takes: decisions through the approval API, kills in the ledger, resumes through StartExecution).
 *
 * Security: every request to /api needs the per-start session token in the `x-savepoint-token`
 * header. The printed URL carries it in its fragment (`/#token=…`, never sent to any server); the
 * page moves it to its sessionStorage (per origin: per port) and clears the address bar. Nothing a
 * browser attaches on its own authorizes anything: no cookie is set or read (a browser sends the
 * cookies of 127.0.0.1 to every port, so another local user's server would collect them), and basic
 * auth is ignored. The event stream, which a browser opens without headers, takes a single-use
 * ticket the page fetched with its header (stream-tickets.ts). Every POST also needs an `Origin` of
 * the console itself when it has one, and is refused when the console is bound to anything but
 * loopback (read-only). The Host header must name loopback (a DNS-rebinding page is refused).
 */
export interface ConsoleOptions {
    ledger: Ledger;
    client: SavepointClient;
    history: HistorySource;
    /** The definition the run's executions ran (the local engine's; on AWS the execution's own), for the graph. */
    definition?: (run: RunRecord) => Promise<AslDefinition | undefined> | AslDefinition | undefined;
    /** Where to watch an execution (the AWS console, on a deployed stack). */
    executionLink?: (executionArn: string) => string;
    /** What the console shows, for the header: e.g. `stack Savepoint (eu-west-1)`. @default the local engine */
    where?: string;
    /** Called on every change the console should show (e.g. the engine's history events). */
    subscribe?: (onChange: () => void) => () => void;
    /** Whether runs can be started (resumed): an engine is reachable. */
    canStart: boolean;
    /** The agent the engine runs, shown in the header. */
    agent?: string;
    /** Who decides, as recorded with a decision or a kill. @default console:$USER */
    actor?: string;
    /** @default 127.0.0.1 */
    host?: string;
    /** @default 0 (any free port) */
    port?: number;
    /** The session token. @default 32 random bytes */
    token?: string;
    /** Expires the event stream's tickets. @default the system clock */
    clock?: Clock;
    log?: (line: string) => void;
}
export interface ConsoleServer {
    /** The address to open: the session token in its fragment (`/#token=…`), which no browser sends to a server. */
    url: string;
    origin: string;
    token: string;
    readOnly: boolean;
    close(): Promise<void>;
}
export declare function startConsole(options: ConsoleOptions): Promise<ConsoleServer>;
