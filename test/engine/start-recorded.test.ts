import { afterAll, beforeAll, expect, it } from 'vitest';
import { runsClient } from '../../client/connect.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * On AWS StartExecution answers before the execution's first state runs, and StartRun records the
 * run after it (a Lambda invocation: a second or more on a cold start). The runs API's start
 * answers once the run is recorded, so that the run its 202 names (its Location, an application's
 * `wait` or `events` right after its `start`) is there to read, not a 404. Here StartRun's write
 * of the run is held, as a slow StartRun holds it, until the test lets it go.
 */
let h: Harness;
let release!: () => void;
let writing!: Promise<void>;
/** Resolves at the first read of the run once StartRun is writing it (the start waiting for the record). */
let readWhileWriting!: Promise<void>;

beforeAll(async () => {
  const held = new Promise<void>((resolve) => (release = resolve));
  let reached!: () => void;
  writing = new Promise<void>((resolve) => (reached = resolve));
  let read!: () => void;
  readWhileWriting = new Promise<void>((resolve) => (read = resolve));
  let isWriting = false;
  const slowStart = (ledger: Ledger): Ledger =>
    new Proxy(ledger, {
      get(target, key, receiver) {
        const value = Reflect.get(target, key, receiver) as unknown;
        if (key === 'createRun') {
          return async (...args: Parameters<Ledger['createRun']>) => {
            isWriting = true;
            reached();
            await held;
            return target.createRun(...args);
          };
        }
        if (key === 'getRun') {
          return async (...args: Parameters<Ledger['getRun']>) => {
            if (isWriting) read();
            return target.getRun(...args);
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
  h = await startHarness({ recovery: false, decorateLedger: slowStart });
}, 60_000);
afterAll(() => h?.stack.close());

it('answers a start once StartRun has recorded its run: a read right after the 202 finds the run', async () => {
  const client = runsClient({ base: h.stack.endpoints.runs.replace(/\/runs$/, '') });
  const start = client.start({ runId: 'slow-start', input: sampleInput, config: { approvalTimeoutSeconds: 3600 } });
  await writing;
  // The start answered while StartRun still wrote the run, or it reads the run, waiting for it.
  const first = await Promise.race([start.then(() => 'the start answered'), readWhileWriting.then(() => 'the start waits for the record')]);
  expect(first).toBe('the start waits for the record');
  release();
  const started = await start;
  expect(started).toMatchObject({ runId: 'slow-start', created: true, lifecycle: 'working' });
  expect(await client.get('slow-start')).toMatchObject({ runId: 'slow-start', report: { status: 'running' } });
  await client.cancel('slow-start', { reason: 'done with it' });
}, 60_000);
