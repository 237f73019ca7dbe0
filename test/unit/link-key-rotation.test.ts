import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LINK_KEYS_REFRESH_MS, secretsLinkSigner } from '../../lambdas/adapters/aws-approvals.js';
import { hmacLinkSigner, LINK_KEY_ROTATION_WINDOW_MS, type LinkKeyVersions } from '../../lambdas/approvals/links.js';
import { TestClock } from '../../testing/index.js';

/**
 * Issue 36 item 7: the link key rotates. Its current version signs; the version a rotation replaced
 * still verifies the links approvers already hold for LINK_KEY_ROTATION_WINDOW_MS (the longest an
 * approval waits); after that, or two rotations later, it verifies nothing.
 */
const v = (n: number) => Buffer.alloc(32, n);
const claims = (expiresAt: Date) => ({ approvalId: 'apv_0123456789abcdef', runId: 'run-1', approver: 'ada@example.com', expiresAt: Math.floor(expiresAt.getTime() / 1000) + 30 * 24 * 3600 });
const expected = { approvalId: 'apv_0123456789abcdef' };

describe('link key rotation', () => {
  it('accepts a link signed by the previous key inside the window, and not after it; new links are signed by the current key', async () => {
    const signedAt = new Date('2026-12-01T00:00:00Z');
    let versions: LinkKeyVersions = { current: v(1) };
    const signer = hmacLinkSigner(async () => versions);
    const old = await signer.sign(claims(signedAt));
    const rotatedAt = new Date('2026-12-02T00:00:00Z');
    versions = { current: v(2), currentSince: rotatedAt, previous: v(1) };
    const fresh = await signer.sign(claims(signedAt));
    expect(await hmacLinkSigner(async () => v(2)).verify(fresh, expected, rotatedAt)).toMatchObject({ ok: true });
    expect(await signer.verify(old, expected, new Date(rotatedAt.getTime() + LINK_KEY_ROTATION_WINDOW_MS - 1))).toMatchObject({ ok: true });
    expect(await signer.verify(old, expected, new Date(rotatedAt.getTime() + LINK_KEY_ROTATION_WINDOW_MS))).toMatchObject({ ok: false, status: 401 });
    // Two rotations later the first key is gone.
    versions = { current: v(3), currentSince: new Date(rotatedAt.getTime() + 1000), previous: v(2) };
    expect(await signer.verify(old, expected, new Date(rotatedAt.getTime() + 2000))).toMatchObject({ ok: false, status: 401 });
    expect(await signer.verify(fresh, expected, new Date(rotatedAt.getTime() + 2000))).toMatchObject({ ok: true });
  });

  it('does not accept the previous key when the store does not say when it rotated', async () => {
    const old = await hmacLinkSigner(async () => v(1)).sign(claims(new Date()));
    expect(await hmacLinkSigner(async () => ({ current: v(2), previous: v(1) })).verify(old, expected, new Date())).toMatchObject({ ok: false, status: 401 });
  });
});

/** A loopback Secrets Manager of one secret: GetSecretValue by stage, and what `put-secret-value` does to the stages. */
const store = { versions: [] as { value: string; createdAt: Date }[], reads: 0 };
const server = createServer(async (request, response) => {
  let body = '';
  for await (const chunk of request) body += String(chunk);
  store.reads++;
  const { VersionStage } = JSON.parse(body) as { VersionStage: 'AWSCURRENT' | 'AWSPREVIOUS' };
  const version = VersionStage === 'AWSCURRENT' ? store.versions.at(-1) : store.versions.at(-2);
  if (!version) {
    response.writeHead(400, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify({ __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret value for staging label: AWSPREVIOUS" }));
    return;
  }
  response.writeHead(200, { 'content-type': 'application/x-amz-json-1.1' }).end(JSON.stringify({ ARN: 'arn:aws:secretsmanager:us-east-1:1:secret:links-AbCdEf', SecretString: version.value, CreatedDate: version.createdAt.getTime() / 1000, VersionStages: [VersionStage] }));
});
let client: SecretsManagerClient;
beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = new SecretsManagerClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, credentials: { accessKeyId: 'a', secretAccessKey: 'b' } });
});
afterAll(async () => {
  client.destroy();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe('the link key on Secrets Manager (AWSCURRENT and AWSPREVIOUS, through the SDK)', () => {
  it('keeps links valid across a put-secret-value: the callback reads the rotated key when a new link matches none it holds', async () => {
    const clock = new TestClock(new Date('2026-12-01T00:00:00Z'));
    store.versions = [{ value: 'a'.repeat(64), createdAt: clock.now() }];
    // Two containers: RequestApproval signs, the callback verifies; each keeps what it read.
    const requestApproval = secretsLinkSigner(client, 'links', clock);
    const callback = secretsLinkSigner(client, 'links', clock);
    const old = await requestApproval.sign(claims(clock.now()));
    expect(await callback.verify(old, expected, clock.now())).toMatchObject({ ok: true });

    clock.advance(10 * 60_000);
    store.versions.push({ value: 'b'.repeat(64), createdAt: clock.now() }); // aws secretsmanager put-secret-value
    const fresh = await requestApproval.sign(claims(clock.now())); // its kept keys were older than the TTL
    clock.advance(LINK_KEYS_REFRESH_MS);
    const reads = store.reads;
    expect(await callback.verify(fresh, expected, clock.now())).toMatchObject({ ok: true }); // read again on the miss
    expect(store.reads).toBeGreaterThan(reads);
    expect(await callback.verify(old, expected, clock.now())).toMatchObject({ ok: true }); // AWSPREVIOUS, inside the window
    clock.advance(LINK_KEY_ROTATION_WINDOW_MS);
    expect(await secretsLinkSigner(client, 'links', clock).verify(old, expected, clock.now())).toMatchObject({ ok: false, status: 401 });
  });

  it('reads again on a miss at most once a minute: forged links cannot make every request a read', async () => {
    const clock = new TestClock(new Date('2026-12-01T00:00:00Z'));
    store.versions = [{ value: 'c'.repeat(64), createdAt: clock.now() }];
    const callback = secretsLinkSigner(client, 'links', clock);
    const forged = `${Buffer.from(JSON.stringify({ ...claims(clock.now()), linkId: 'forged-id-1' })).toString('base64url')}.${Buffer.alloc(32).toString('base64url')}`;
    await callback.verify(forged, expected, clock.now());
    const reads = store.reads;
    for (let i = 0; i < 5; i++) expect(await callback.verify(forged, expected, clock.now())).toMatchObject({ ok: false, status: 401 });
    expect(store.reads).toBe(reads);
  });
});
