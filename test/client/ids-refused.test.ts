import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect, it } from 'vitest';
import { connect } from '../../client/index.js';

/**
 * An approval id or batch id the API could not be asked about is refused by the client before any
 * request, naming the field (400), as a run id is: sent, `''` named another path (`POST /approvals/`,
 * `GET /batches/`), answered 405 as if the API lacked the method.
 */
it('refuses an empty or impossible approval id or batch id, sending nothing', async () => {
  // Counts what reaches it; answers every request as the API answers a path it has no method for.
  const paths: string[] = [];
  const server = createServer((request, response) => {
    paths.push(`${request.method} ${request.url}`);
    response.writeHead(405, { 'content-type': 'application/json' }).end(JSON.stringify({ message: `${request.method} is not allowed on ${request.url}` }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const client = await connect({ url: origin, credential: 'c' });
    for (const approvalId of ['', 'apv_', 'apv_AAAAAAAAAA/../x', 'run-1']) {
      await expect(client.decide(approvalId, 'approve')).rejects.toMatchObject({ name: 'RunsApiError', status: 400, message: `approvalId: expected an id like apv_…, got ${JSON.stringify(approvalId)}` });
    }
    for (const batchId of ['', 'a/b', 'b'.repeat(41)]) {
      await expect(client.batch(batchId)).rejects.toMatchObject({
        name: 'RunsApiError',
        status: 400,
        message: `invalid batchId: expected 1-40 letters, digits, "-" or "_" (its runs are named <batchId>-<item>), got ${JSON.stringify(batchId)}`,
      });
    }
    expect(paths).toEqual([]);
    // The control: ids the API takes are sent (and what it answers is the caller's).
    await expect(client.decide('apv_AAAAAAAAAAAAAAAAAAAAAA', 'approve')).rejects.toMatchObject({ status: 405 });
    await expect(client.batch('invoices-2026-11')).rejects.toMatchObject({ status: 405 });
    // (A serve's API is under its credential: /c/v1.)
    expect(paths).toEqual(['POST /c/v1/approvals/apv_AAAAAAAAAAAAAAAAAAAAAA', 'GET /c/v1/batches/invoices-2026-11']);
  } finally {
    server.close();
  }
});
