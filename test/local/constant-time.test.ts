import crypto from 'node:crypto';
import { syncBuiltinESMExports } from 'node:module';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createClient } from '../../client/ledger-client.js';
import { historySource } from '../../console/history.js';
import { startConsole } from '../../console/server.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { serveLedger } from '../../lambdas/ledger/remote-ledger.js';
import { sameSecret } from '../../lambdas/shared/same-secret.js';
import { startApprovalApi } from '../../local/services/approval-api.js';
import { startCfnEndpoint } from '../../local/services/cloudformation.js';
import { startDynamo } from '../../local/services/dynamodb.js';

// The comparison of every loopback credential goes through crypto.timingSafeEqual (by way of
// lambdas/shared/same-secret.ts): a `===` or a string prefix test would answer a near guess faster
// than a far one. Timing over HTTP is too noisy to assert, so the test watches the call itself:
// node:crypto's export is wrapped, and syncBuiltinESMExports carries it to the modules' named
// imports (a builtin's ESM bindings follow its CommonJS exports; vi.mock would not reach modules
// a non-isolated worker loaded before this file).
const timingSafeEqual = { calls: 0 };
const original = crypto.timingSafeEqual;
beforeAll(() => {
  crypto.timingSafeEqual = (a: NodeJS.ArrayBufferView, b: NodeJS.ArrayBufferView) => {
    timingSafeEqual.calls++;
    return original(a, b);
  };
  syncBuiltinESMExports();
});
afterAll(() => {
  crypto.timingSafeEqual = original;
  syncBuiltinESMExports();
});

describe('loopback credentials are compared in constant time', () => {
  const closers: (() => Promise<void>)[] = [];
  beforeEach(() => {
    timingSafeEqual.calls = 0;
  });
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });

  /** A guess as long as the real secret and differing only in its last character. */
  const nearGuess = (url: string, secret: string) => url.replace(secret, `${secret.slice(0, -1)}${secret.endsWith('a') ? 'b' : 'a'}`);

  it('sameSecret: equal, unequal, and unequal lengths (which timingSafeEqual alone would throw on)', () => {
    expect(sameSecret('s3cret', 's3cret')).toBe(true);
    expect(sameSecret('s3creT', 's3cret')).toBe(false);
    expect(sameSecret('s3', 's3cret')).toBe(false);
    expect(sameSecret(Buffer.from('s3cret'), 's3cret')).toBe(true);
    expect(timingSafeEqual.calls).toBe(4);
  });

  it('the ledger endpoint', async () => {
    const served = await serveLedger(EmbeddedLedger.open());
    closers.push(served.close);
    const secret = served.url.split('/').at(-1)!;
    const response = await fetch(nearGuess(served.url, secret), { method: 'POST', body: '{"method":"listRuns","args":[]}' });
    expect(response.status).toBe(404);
    expect(timingSafeEqual.calls).toBeGreaterThan(0);
  });

  it('the approval API', async () => {
    const api = await startApprovalApi(async () => ({ statusCode: 200, body: '{}' }), { credential: 'c'.repeat(43) });
    closers.push(api.close);
    expect((await fetch(nearGuess(api.url, 'c'.repeat(43)))).status).toBe(403);
    expect(timingSafeEqual.calls).toBeGreaterThan(0);
  });

  it('the DynamoDB emulator', async () => {
    const dynamo = await startDynamo();
    closers.push(dynamo.close);
    const secret = new URL(dynamo.endpoint).pathname.slice(1);
    expect((await fetch(nearGuess(dynamo.endpoint, secret), { method: 'POST', body: '{}' })).status).toBe(400);
    expect(timingSafeEqual.calls).toBeGreaterThan(0);
  });

  it('the CloudFormation endpoint', async () => {
    const cfn = await startCfnEndpoint([], { credential: 'c'.repeat(43) });
    closers.push(cfn.close);
    expect((await fetch(nearGuess(cfn.url, 'c'.repeat(43)), { method: 'POST', body: 'Action=DescribeStacks' })).status).toBe(403);
    expect(timingSafeEqual.calls).toBeGreaterThan(0);
  });

  it("the console's token", async () => {
    const ledger = EmbeddedLedger.open();
    const console = await startConsole({ ledger, client: createClient({ ledger }), history: historySource({}), canStart: false, token: 't'.repeat(43) });
    closers.push(() => console.close());
    const response = await fetch(`http://127.0.0.1:${new URL(console.origin).port}/api/runs`, { headers: { 'x-savepoint-token': `${'t'.repeat(42)}u` } });
    expect(response.status).toBe(403);
    expect(timingSafeEqual.calls).toBeGreaterThan(0);
  });
});
