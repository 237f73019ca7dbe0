import { KMSClient } from '@aws-sdk/client-kms';
import { createHmac } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decisionKeyOnFirstCall } from '../../lambdas/adapters/clients-on-first-call.js';
import { kmsDecisionMac } from '../../lambdas/adapters/kms-decision-mac.js';

/**
 * Issue 36 item 7: KMS rotates no HMAC key, so rotating the decision key is a new key. A decision
 * names the key it was signed with, and verifies after the rotation while that key is one of the
 * deployment's previous keys; a MAC naming any other key is refused without asking KMS.
 */
const KEY_A = 'arn:aws:kms:us-east-1:123456789012:key/aaaaaaaa-0000-0000-0000-000000000001';
const KEY_B = 'arn:aws:kms:us-east-1:123456789012:key/bbbbbbbb-0000-0000-0000-000000000002';
const OTHER = 'arn:aws:kms:us-east-1:999999999999:key/cccccccc-0000-0000-0000-000000000003';
const material: Record<string, Buffer> = { [KEY_A]: Buffer.alloc(32, 1), [KEY_B]: Buffer.alloc(32, 2), [OTHER]: Buffer.alloc(32, 3) };

/** A loopback KMS of three HMAC keys: GenerateMac and VerifyMac as the SDK sends them. */
const calls: { op: string; keyId: string }[] = [];
const server = createServer(async (request, response) => {
  let body = '';
  for await (const chunk of request) body += String(chunk);
  const op = String(request.headers['x-amz-target']).replace('TrentService.', '');
  const input = JSON.parse(body) as { KeyId: string; Message: string; Mac?: string };
  calls.push({ op, keyId: input.KeyId });
  const mac = createHmac('sha256', material[input.KeyId]!).update(Buffer.from(input.Message, 'base64')).digest();
  const json = (status: number, value: unknown) => response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify(value));
  if (op === 'GenerateMac') return json(200, { KeyId: input.KeyId, Mac: mac.toString('base64'), MacAlgorithm: 'HMAC_SHA_256' });
  if (Buffer.from(input.Mac!, 'base64').equals(mac)) return json(200, { KeyId: input.KeyId, MacValid: true, MacAlgorithm: 'HMAC_SHA_256' });
  return json(400, { __type: 'KMSInvalidMacException', message: 'invalid' });
});
let kms: KMSClient;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  kms = new KMSClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
});
afterAll(async () => {
  kms.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('decision key rotation (KMS HMAC keys)', () => {
  it('verifies a decision signed before the rotation with the key it names, while that key is a previous key', async () => {
    const message = JSON.stringify(['savepoint-decision-v1', 'apv_1', 'run', 1, 0, 'approved', 'ada', 'link', '2026-12-01T00:00:00Z']);
    const before = await kmsDecisionMac(kms, KEY_A).sign(message);
    expect(before.startsWith('kms1.')).toBe(true);
    calls.length = 0;
    expect(await kmsDecisionMac(kms, KEY_B, [KEY_A]).verify(message, before)).toBe(true);
    expect(calls).toEqual([{ op: 'VerifyMac', keyId: KEY_A }]);
    // Once the old key is dropped from the previous keys, its decisions no longer verify.
    calls.length = 0;
    expect(await kmsDecisionMac(kms, KEY_B).verify(message, before)).toBe(false);
    expect(calls).toEqual([]);
    // New decisions are signed by the new key, and name it.
    const after = await kmsDecisionMac(kms, KEY_B, [KEY_A]).sign(message);
    expect(Buffer.from(after.split('.')[1]!, 'base64url').toString()).toBe(KEY_B);
    expect(await kmsDecisionMac(kms, KEY_B).verify(message, after)).toBe(true);
  });

  it('refuses a MAC naming a key the deployment does not trust (made with a key of the forger\'s own), and verifies an untagged MAC with the current key', async () => {
    const message = 'm';
    const forged = await kmsDecisionMac(kms, OTHER).sign(message);
    calls.length = 0;
    expect(await kmsDecisionMac(kms, KEY_B, [KEY_A]).verify(message, forged)).toBe(false);
    expect(calls).toEqual([]);
    const legacy = createHmac('sha256', material[KEY_B]!).update(message).digest('base64');
    expect(await kmsDecisionMac(kms, KEY_B).verify(message, legacy)).toBe(true);
    expect(await kmsDecisionMac(kms, KEY_B).verify(message, `${forged}.extra`)).toBe(false);
  });

  it("is the same key where KMS's SDK is loaded on the first MAC (CallTool's and BudgetCheck's decisionKeyOnFirstCall)", async () => {
    const saved = { ...process.env };
    // The client is made as a function's is, from the environment: this KMS, the region, credentials.
    Object.assign(process.env, { AWS_REGION: 'us-east-1', AWS_ENDPOINT_URL_KMS: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, AWS_ACCESS_KEY_ID: 'a', AWS_SECRET_ACCESS_KEY: 'b' });
    try {
      const message = 'm';
      const signed = await kmsDecisionMac(kms, KEY_A).sign(message);
      const lazy = decisionKeyOnFirstCall.decisionMac(KEY_B, [KEY_A]);
      expect(lazy.keyName).toBe(KEY_B);
      calls.length = 0;
      expect(await lazy.verify(message, signed)).toBe(true);
      expect(await lazy.verify('other', signed)).toBe(false);
      expect(calls).toEqual([{ op: 'VerifyMac', keyId: KEY_A }, { op: 'VerifyMac', keyId: KEY_A }]);
      expect(await kmsDecisionMac(kms, KEY_B).verify(message, await lazy.sign(message))).toBe(true);
    } finally {
      for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
      Object.assign(process.env, saved);
    }
  });
});
