import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { nodeHttp } from '../shared/node-http.js';
import type { AddressInfo } from 'node:net';
import * as z from 'zod';
import { isRecord } from '../shared/json.js';
import { createLoopbackServer, type ConnectionLimits } from '../shared/loopback-server.js';
import { sameSecret } from '../shared/same-secret.js';
import type { Ledger } from './ledger.js';
import type { PruneRecords } from './pruning.js';

/**
 * The ledger of a running engine, for the other processes on this machine (`savepoint status`,
 * `approvals`, `kill`, …): the engine serves its `Ledger` over loopback HTTP, and `RemoteLedger`
 * implements `Ledger` by calling it. The protocol, once:
 *
 *   POST <url>            url = http://127.0.0.1:<port>/ledger/<secret>   (published in engine.json)
 *   body   { "method": "claimCall", "args": [ {…record…}, "2026-11-29T02:00:00.000Z" ] }
 *   200    { "value": <the method's result, JSON; absent for undefined> }
 *   200    { "error": { "name": "ConditionalCheckFailedException", "message": "…" } }   the method threw
 *   400    { "error": { "name": "InvalidRequest", "message": "…" } }                      a request that is not one
 *
 * Arguments and results are JSON: the `Date` arguments (`now`) travel as ISO strings and are
 * revived by position, or by field of a method's one argument object (DATE_ARGS). Each request is one method call on the engine's ledger, so its
 * conditional writes stay atomic exactly as in the engine. The random path segment keeps other
 * local programs (a web page POSTing to loopback) from reaching the ledger by guessing the port.
 */

/** Every method of `Ledger`, with where its `Date` arguments are: a position, or a field's name in its one argument (an object). */
const DATE_ARGS = {
  // RunLedger
  createRun: [], getRun: [], prunedRun: [], listRuns: [], listRunsOf: [], attachExecution: [2], recordRecovery: [], finishRun: [2], listRunningRuns: [], recordFork: [],
  // GuardLedger
  killRun: [], getGlobalKill: [], setGlobalKill: [], recordGuardEvent: [], closeChildRun: [1], countStep: [], applyBudgetExtension: [], getBreaker: [], saveBreaker: [],
  // TurnLedger
  recordTurn: [], getTurn: [], listConversation: [], loadStep: [],
  // ToolCallLedger
  getCall: [], claimCall: [1], checkHanded: [], recordCall: [1], completeCall: ['now'], releaseCall: [3], renewCall: ['now', 'leaseUntil'],
  // EffectLedger
  getEffect: [], putEffectBlob: [], getEffectBlob: [],
  // AggregateLedger
  reserveAggregate: [1], getAggregate: [],
  // FleetLedger
  reserveInFleet: [1], returnFleetLease: [1], getFleetDay: [],
  // EffectApprovalLedger
  shareApproval: [1], getEffectApproval: [],
  // ApprovalLedger
  upsertApproval: [], getApproval: [], getBudgetApproval: [], findApproval: [], listPendingApprovals: [], decideApproval: [2], recordFirstApproval: [], getTaskToken: [], markDelivered: [], storeChildWait: [], getChildWait: [],
  // ExecutionRunLedger
  noteExecutionRun: [], runOfExecution: [],
  // BlobStore
  putBlob: [], getBlob: [],
} as const satisfies Record<keyof Ledger, readonly (number | string)[]>;

/**
 * What the engine's ledger answers besides `Ledger` (pruning.ts `PruneRecords`): the prune records,
 * what fails in them and a prune's plan, read-only — `status` names a pruned run, `verify` checks
 * its record (`verify --all` every record), and `prune --dry-run` plans while the engine runs (it
 * prunes nothing: a prune needs the engine stopped).
 */
const RECORD_READS = { prunes: [], planPrune: [0], verifyPrunes: [] } as const satisfies Record<keyof PruneRecords, readonly (number | string)[]>;

type LedgerMethod = keyof typeof DATE_ARGS;
type Method = LedgerMethod | keyof typeof RECORD_READS;
const DATES: Readonly<Record<Method, readonly (number | string)[]>> = { ...DATE_ARGS, ...RECORD_READS };
const METHODS = Object.keys(DATES) as [Method, ...Method[]];

const IsoDate = z.iso.datetime();
const Call = z.object({ method: z.enum(METHODS), args: z.array(z.unknown()).max(7) }).strict();
const Answer = z.union([
  z.object({ value: z.unknown().optional() }).strict(),
  z.object({ error: z.object({ name: z.string(), message: z.string() }) }).strict(),
]);

/** A request body larger than this is refused (a run record with its input is a few KiB). */
const MAX_BODY_BYTES = 8 << 20;

export interface ServedLedger {
  /** Where `RemoteLedger` reaches it (secret included). */
  readonly url: string;
  close(): Promise<void>;
}

/** Serves `ledger` on a loopback port, under `limits` (lambdas/shared/loopback-server.ts). */
export async function serveLedger(ledger: Ledger, limits?: ConnectionLimits): Promise<ServedLedger> {
  const secret = randomBytes(16).toString('hex');
  const server = createLoopbackServer((req, res) => {
    if (req.method !== 'POST' || !sameSecret(req.url ?? '', `/ledger/${secret}`)) return reply(res, 404, { error: { name: 'NotFound', message: 'no such endpoint' } });
    void answer(ledger, req).then(
      (body) => reply(res, 'invalid' in body ? 400 : 200, strip(body)),
      (error: unknown) => reply(res, 500, { error: { name: 'InternalError', message: String(error) } }),
    );
  }, limits);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  server.unref();
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ledger/${secret}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Body = { value?: unknown } | { error: { name: string; message: string }; invalid?: true };

async function answer(ledger: Ledger, req: IncomingMessage): Promise<Body> {
  const invalid = (message: string): Body => ({ error: { name: 'InvalidRequest', message }, invalid: true });
  let text: string;
  try {
    text = await readBody(req);
  } catch (error) {
    return invalid((error as Error).message);
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return invalid('the body is not JSON');
  }
  const call = Call.safeParse(raw);
  if (!call.success) return invalid(`expected {"method": <a Ledger method>, "args": [...]}: ${call.error.issues[0]?.message}`);
  const { method, args } = call.data;
  for (const where of DATES[method]) {
    const holder = (typeof where === 'number' ? args : isRecord(args[0]) ? args[0] : {}) as Record<string | number, unknown>;
    if (holder[where] === undefined) continue;
    if (!IsoDate.safeParse(holder[where]).success) return invalid(`${method}: ${typeof where === 'number' ? `argument ${where + 1}` : where} must be an ISO date-time`);
    holder[where] = new Date(holder[where] as string);
  }
  // A ledger that keeps no prune records (a decorated one) answers that it has none to read.
  const target = ledger as Ledger & Partial<PruneRecords>;
  if (typeof target[method] !== 'function') return { error: { name: 'NotSupported', message: `this engine's ledger answers no ${method}` } };
  // A callback does not cross the wire: a prune record that does not verify is left out, as each
  // command that reads them leaves it (`verify --all` names it: verifyPrunes).
  const given = method === 'prunes' ? [() => undefined] : args;
  try {
    const value = await (target[method] as (...args: unknown[]) => Promise<unknown>).apply(ledger, given);
    return value === undefined ? {} : { value };
  } catch (error) {
    // The method's own failure (a failed condition, an unknown run): the caller gets it back by name.
    const { name, message } = error instanceof Error ? error : { name: 'Error', message: String(error) };
    return { error: { name, message } };
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new Error(`the body is larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function strip(body: Body): Body {
  if ('invalid' in body) return { error: body.error };
  return body;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) }).end(text);
}

/** An error the served ledger threw, under the same name (e.g. ConditionalCheckFailedException). */
export class RemoteLedgerError extends Error {
  constructor(
    override readonly name: string,
    message: string,
  ) {
    super(message);
  }
}

/** The `Ledger` of a running engine, reached through `serveLedger`'s URL. */
export class RemoteLedger {
  private readonly agent = new (nodeHttp().Agent)({ keepAlive: true, maxSockets: 8 });

  constructor(private readonly url: string) {
    const parsed = new URL(url);
    if (parsed.protocol !== 'http:' || !['127.0.0.1', 'localhost', '[::1]'].includes(parsed.hostname)) {
      throw new Error(`the ledger endpoint must be http on loopback, got ${url}`);
    }
  }

  /** Creates the client; every `Ledger` method is one POST, and so are the prune records' reads. */
  static connect(url: string): Ledger & PruneRecords & { close(): void } {
    const remote = new RemoteLedger(url);
    const methods = Object.fromEntries(METHODS.map((method) => [method, (...args: unknown[]) => remote.call(method, args)]));
    return { ...(methods as unknown as Ledger & PruneRecords), close: () => remote.agent.destroy() };
  }

  private async call(method: Method, args: unknown[]): Promise<unknown> {
    // Trailing undefined arguments are dropped by JSON; inner ones become null, which no method takes.
    while (args.length > 0 && args.at(-1) === undefined) args = args.slice(0, -1);
    const { status, text } = await this.post(JSON.stringify({ method, args }));
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch {
      throw new Error(`the engine's ledger endpoint answered ${status} with no JSON`);
    }
    const parsed = Answer.safeParse(raw);
    if (!parsed.success) throw new Error(`the engine's ledger endpoint answered ${status} with something that is not a ledger answer`);
    if ('error' in parsed.data) throw new RemoteLedgerError(parsed.data.error.name, parsed.data.error.message);
    return parsed.data.value;
  }

  private post(body: string): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const req = nodeHttp().request(
        this.url,
        { method: 'POST', agent: this.agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', reject);
        },
      );
      req.on('error', (error) => reject(new Error(`the engine's ledger endpoint ${new URL(this.url).host} is unreachable: ${error.message}`, { cause: error })));
      req.end(body);
    });
  }
}
