import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { LAMBDA_SYNC_RESPONSE_MAX_BYTES, RESPONSE_TOO_LARGE } from '../../local/aws/lambda-response-size.js';
import { startApprovalApi } from '../../local/services/approval-api.js';
import { manifestRuns, MAX_BATCH_ITEMS, REFUSAL_REASON_MAX_CHARS } from '../../lambdas/runs/batch.js';

/**
 * Lambda's 6 MB synchronous response (local/aws/lambda-response-size.ts): a runs or approval
 * function whose result is larger fails with Function.ResponseSizeTooLarge, and API Gateway's proxy
 * integration answers 502 — the twin's API as well. What the runs function lists that grows with a
 * manifest (each refused item's reason) is bounded so that a whole listing stays far under it.
 */
const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** The twin's API with a runs function that answers `bytes` of body. */
async function apiAnswering(bytes: number) {
  const answer = async () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ blob: 'x'.repeat(bytes) }) });
  const api = await startApprovalApi(answer, { runs: answer });
  closers.push(() => api.close());
  return api.runsUrl;
}

describe("Lambda's synchronous response limit in the twin's API", () => {
  it(`answers 502, as API Gateway does for a function that failed with ${RESPONSE_TOO_LARGE}, a result over 6 MB; a smaller one as it is`, async () => {
    const over = await fetch(await apiAnswering(LAMBDA_SYNC_RESPONSE_MAX_BYTES));
    expect(over.status).toBe(502);
    expect(await over.json()).toEqual({ message: 'Internal server error' });
    const under = await fetch(await apiAnswering(LAMBDA_SYNC_RESPONSE_MAX_BYTES - 64 * 1024));
    expect(under.status).toBe(200);
    expect(((await under.json()) as { blob: string }).blob).toHaveLength(LAMBDA_SYNC_RESPONSE_MAX_BYTES - 64 * 1024);
  });

  it("keeps a manifest listing's refused reasons bounded: MAX_BATCH_ITEMS items each refused for a thousand unknown fields stay under a tenth of it", async () => {
    const wide = Object.fromEntries(Array.from({ length: 1_000 }, (_, index) => [`field_with_a_long_name_${index}`, index]));
    const items = Array.from({ length: MAX_BATCH_ITEMS }, () => wide);
    const listed = await manifestRuns({ bucket: 'b', key: 'k.json', format: 'json' }, 'wide', { text: async () => JSON.stringify(items), etag: async () => undefined }, { name: 'strict', input: z.object({}).strict() });
    expect(listed.runs).toHaveLength(MAX_BATCH_ITEMS);
    for (const run of listed.runs) expect(run.refused?.length).toBeLessThanOrEqual(REFUSAL_REASON_MAX_CHARS);
    expect(listed.runs[0]!.refused).toMatch(/^invalid input of agent strict: Unrecognized keys: "field_with_a_long_name_0"/);
    expect(Buffer.byteLength(JSON.stringify(listed.runs))).toBeLessThan(LAMBDA_SYNC_RESPONSE_MAX_BYTES / 10);
  });
});
