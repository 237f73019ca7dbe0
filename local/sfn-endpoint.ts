/**
 * A loopback HTTP endpoint speaking the Step Functions AWS JSON 1.0 protocol, so the real
 * @aws-sdk/client-sfn (endpoint http://127.0.0.1:<port>) drives a LocalEngine.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { LocalSfnError, paginate, type LocalEngine } from './engine.js';

const TARGET_PREFIX = 'AWSStepFunctions.';
const MAX_BODY_BYTES = 2 * 1024 * 1024; // generous: the largest legal request is a 256 KiB payload

const arn = z.string().min(1);
const status = z.enum(['RUNNING', 'SUCCEEDED', 'FAILED', 'ABORTED', 'TIMED_OUT']);
const maxResults = z.number().int().min(0).max(1000).optional();

const schemas = {
  StartExecution: z.object({ stateMachineArn: arn, name: z.string().optional(), input: z.string().optional(), traceHeader: z.string().optional() }),
  DescribeExecution: z.object({ executionArn: arn }),
  ListExecutions: z.object({ stateMachineArn: arn.optional(), statusFilter: status.optional(), maxResults, nextToken: z.string().optional() }),
  StopExecution: z.object({ executionArn: arn, error: z.string().max(256).optional(), cause: z.string().max(32768).optional() }),
  SendTaskSuccess: z.object({ taskToken: z.string().min(1), output: z.string() }),
  SendTaskFailure: z.object({ taskToken: z.string().min(1), error: z.string().max(256).optional(), cause: z.string().max(32768).optional() }),
  SendTaskHeartbeat: z.object({ taskToken: z.string().min(1) }),
  GetExecutionHistory: z.object({
    executionArn: arn,
    maxResults,
    reverseOrder: z.boolean().optional(),
    nextToken: z.string().optional(),
    includeExecutionData: z.boolean().optional(),
  }),
  DescribeStateMachine: z.object({ stateMachineArn: arn }),
  DescribeStateMachineForExecution: z.object({ executionArn: arn }),
};

type Operation = keyof typeof schemas;
type Handlers = { [K in Operation]: (engine: LocalEngine, req: z.infer<(typeof schemas)[K]>) => unknown };

const handlers: Handlers = {
  StartExecution: (engine, req) => {
    // A version ARN (`<machine>:<n>`) starts on that version, as the service does; the machine's own, on the newest.
    const qualified = /^(.*):(\d+)$/.exec(req.stateMachineArn);
    const version = qualified?.[1] === engine.stateMachineArn ? qualified : undefined;
    checkStateMachine(engine, version?.[1] ?? req.stateMachineArn);
    return engine.startExecution({ ...(req.name !== undefined && { name: req.name }), input: req.input ?? '{}', ...(version && { version: Number(version[2]) }) });
  },
  DescribeExecution: (engine, req) => engine.describeExecution(req.executionArn),
  ListExecutions: (engine, req) => {
    if (req.stateMachineArn !== undefined) checkStateMachine(engine, req.stateMachineArn);
    return engine.listExecutions(req);
  },
  StopExecution: (engine, req) => engine.stopExecution(req.executionArn, req),
  SendTaskSuccess: (engine, req) => (engine.sendTaskSuccess(req.taskToken, req.output), {}),
  SendTaskFailure: (engine, req) => (engine.sendTaskFailure(req.taskToken, req.error, req.cause), {}),
  SendTaskHeartbeat: (engine, req) => (engine.sendTaskHeartbeat(req.taskToken), {}),
  GetExecutionHistory: (engine, req) => {
    const events = engine.getExecutionHistory(req.executionArn, { reverseOrder: req.reverseOrder ?? false });
    const page = paginate(events, req.maxResults || 1000, req.nextToken);
    return { events: page.items, ...(page.nextToken && { nextToken: page.nextToken }) };
  },
  DescribeStateMachine: (engine, req) => {
    checkStateMachine(engine, req.stateMachineArn);
    return engine.describeStateMachine();
  },
  // The definition of the version the execution runs (throws for an unknown execution).
  DescribeStateMachineForExecution: (engine, req) => {
    const version = engine.versionOf(req.executionArn);
    const { stateMachineArn, name, roleArn, creationDate } = engine.describeStateMachine();
    return { stateMachineArn, name, definition: JSON.stringify(version.definition), roleArn, updateDate: creationDate };
  },
};

export interface SfnEndpoint {
  url: string;
  port: number;
  close(): Promise<void>;
}

export async function startSfnEndpoint(engine: LocalEngine, opts: { port?: number } = {}): Promise<SfnEndpoint> {
  const server = createServer((req, res) => {
    handle(engine, req)
      .then((body) => send(res, 200, body))
      .catch((e: unknown) => {
        if (e instanceof LocalSfnError) send(res, 400, { __type: e.name, message: e.message });
        else send(res, 500, { __type: 'InternalFailure', message: e instanceof Error ? e.message : String(e) });
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections(); // the SDK keeps sockets alive; close() alone would wait for them
      }),
  };
}

async function handle(engine: LocalEngine, req: IncomingMessage): Promise<unknown> {
  const target = req.headers['x-amz-target'];
  const operation = typeof target === 'string' && target.startsWith(TARGET_PREFIX) ? target.slice(TARGET_PREFIX.length) : '';
  if (req.method !== 'POST' || !(operation in handlers)) {
    throw new LocalSfnError('UnknownOperationException', `Unknown operation ${String(target)}`);
  }
  const text = await readBody(req);
  let body: unknown;
  try {
    body = text === '' ? {} : JSON.parse(text);
  } catch {
    throw new LocalSfnError('SerializationException', 'The request body is not valid JSON');
  }
  const op = operation as Operation;
  const parsed = schemas[op].safeParse(body);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `Value at '${i.path.join('.') || '(body)'}' failed to satisfy constraint: ${i.message}`);
    throw new LocalSfnError('ValidationException', `${issues.length} validation error(s) detected: ${issues.join('; ')}`);
  }
  return await (handlers[op] as (engine: LocalEngine, req: unknown) => unknown)(engine, parsed.data);
}

function checkStateMachine(engine: LocalEngine, stateMachineArn: string): void {
  if (stateMachineArn !== engine.stateMachineArn) {
    throw new LocalSfnError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${stateMachineArn}'`);
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        reject(new LocalSfnError('ValidationException', `Request body larger than ${MAX_BODY_BYTES} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, statusCode: number, body: unknown): void {
  if (res.headersSent || res.destroyed) return;
  const json = JSON.stringify(body, epochSeconds);
  res.writeHead(statusCode, {
    'content-type': 'application/x-amz-json-1.0',
    'content-length': Buffer.byteLength(json),
    'x-amzn-requestid': randomUUID(),
  });
  res.end(json);
}

/** The JSON protocol sends timestamps as epoch seconds; Date.toJSON has already run, so read the holder. */
function epochSeconds(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const raw = this[key];
  return raw instanceof Date ? raw.getTime() / 1000 : value;
}
