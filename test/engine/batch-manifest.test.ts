import { createHash } from 'node:crypto';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiGatewayEvent } from '../../local/services/approval-api.js';
import { lambdaContext } from '../../local/services/lambda-context.js';
import { startS3 } from '../../local/services/s3.js';
import { LocalEngine } from '../../local/engine/local-engine.js';
import type { AslDefinition } from '../../local/template/asl.js';
import { LOCAL_MANIFEST_BUCKET } from '../../lambdas/runs/batch.js';
import { counterAgent } from '../support/counter-agent.js';
import { startAgentHarness, type AgentHarness } from '../support/agent-harness.js';

/**
 * A batch whose items are an S3 object (`manifest`): the twin's batch state machine reads it itself
 * (the Distributed Map's ItemReader, local/aws/sfn-item-reader.ts) from the twin's S3
 * (local/services/s3.ts, the real @aws-sdk/client-s3 on loopback), signed as the batch state
 * machine's role and decided by that role's policies, and starts one run per item, once. What AWS
 * refuses, the twin refuses the same way: the batch fails with States.ItemReaderFailed.
 */
let h: AgentHarness<any>;
beforeAll(async () => {
  h = await startAgentHarness({ agent: counterAgent({ calls: 1, perTurn: 1 }), recovery: false, batchPollWaitMs: 5 });
  // The batch engine made here, not in the first test's POST: from a checkout CDK synthesizes its
  // template (local/template/batch-synth.ts), tens of seconds on a loaded machine, and that would
  // count against the first test's timeout and the runs function's 20 s.
  await h.stack.batches.engine();
}, 180_000);
afterAll(() => h?.stack.close());

const post = (body: unknown) =>
  h.stack.runsApi(apiGatewayEvent({ method: 'POST', route: 'batches', body: JSON.stringify(body), principal: 'local:tester' }), lambdaContext('RunsApi', 20_000));
const get = async (batchId: string) => JSON.parse((await h.stack.runsApi(apiGatewayEvent({ method: 'GET', route: 'batches', approvalId: batchId, body: null, principal: 'local:tester' }), lambdaContext('RunsApi', 20_000))).body) as { status: string; error?: string; cause?: string; manifest?: object; runs: { runId: string; status: string }[]; counts: Record<string, number>; truncated?: true; runsUnlisted?: string };
let client: S3Client | undefined;
afterAll(() => client?.destroy());
/** A manifest put as the person at the CLI would (the account's administrator), with the real S3 client. */
async function put(bucket: string, key: string, body: string): Promise<void> {
  client ??= new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, endpoint: h.stack.endpoints.s3, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' });
  await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
}
/** The batch's execution, to its end. */
async function ended(batchId: string) {
  const engine = await h.stack.batches.engine();
  const execution = engine.listExecutions().executions.find((listed) => listed.name === batchId)!;
  return engine.waitForExecution(execution.executionArn);
}
const runsOf = async (batchId: string) => (await h.stack.ledger.listRuns(1_000)).filter((run) => run.runId.startsWith(`${batchId}-`));

describe('a batch from an S3 manifest', () => {
  it('runs one run per item of a JSON array, each named by its index, started as the batch’s caller', async () => {
    const items = Array.from({ length: 12 }, (_, index) => ({ id: `j${index}` }));
    await put(LOCAL_MANIFEST_BUCKET, 'batches/days.json', JSON.stringify(items));
    const answer = await post({ batchId: 'mjson', manifest: { bucket: LOCAL_MANIFEST_BUCKET, key: 'batches/days.json' }, concurrency: 4 });
    expect(answer.statusCode, answer.body).toBe(202);
    expect(JSON.parse(answer.body)).toMatchObject({ batchId: 'mjson', created: true, manifest: { bucket: LOCAL_MANIFEST_BUCKET, key: 'batches/days.json', format: 'json' }, runs: items.map((_, index) => ({ runId: `mjson-${index}`, status: expect.any(String) })) });
    expect(await ended('mjson')).toMatchObject({ status: 'SUCCEEDED' });
    const runs = await runsOf('mjson');
    expect(runs.map((run) => run.runId).sort()).toEqual(items.map((_, index) => `mjson-${index}`).sort());
    expect(runs.every((run) => run.status === 'succeeded' && run.executions.length === 1 && run.startedBy === 'local:tester')).toBe(true);
    // Its progress lists each item's run, read from the manifest as the runs function's role reads it.
    const progress = await get('mjson');
    expect(progress.status).toBe('SUCCEEDED');
    expect(progress.runs).toEqual(items.map((_, index) => ({ runId: `mjson-${index}`, status: 'succeeded' })));
    expect(progress.counts).toEqual({ succeeded: 12 });
    expect(progress.truncated).toBeUndefined();
    expect(progress.runsUnlisted).toBeUndefined();
    // Started again: the same batch, nothing started.
    expect(JSON.parse((await post({ batchId: 'mjson', manifest: { bucket: LOCAL_MANIFEST_BUCKET, key: 'batches/days.json' } })).body)).toMatchObject({ created: false });
    expect((await runsOf('mjson')).every((run) => run.executions.length === 1)).toBe(true);
  });

  it('takes another object put at the same location as another batch: posted again without a batchId, 409 naming the change, and nothing starts', async () => {
    const key = 'batches/nightly.json';
    const first = JSON.stringify([{ id: 'n0' }, { id: 'n1' }]);
    await put(LOCAL_MANIFEST_BUCKET, key, first);
    const started = await post({ manifest: { bucket: LOCAL_MANIFEST_BUCKET, key } });
    expect(started.statusCode, started.body).toBe(202);
    const { batchId, manifest } = JSON.parse(started.body) as { batchId: string; manifest: { etag: string } };
    // The object's ETag as S3 gives a single-part upload's (the MD5 of its bytes), read as the batch started.
    const md5 = (body: string) => `"${createHash('md5').update(body).digest('hex')}"`;
    expect(manifest.etag).toBe(md5(first));
    expect(await ended(batchId)).toMatchObject({ status: 'SUCCEEDED' });

    // The same object posted again (a client's retry): the same batch, nothing new.
    expect(JSON.parse((await post({ manifest: { bucket: LOCAL_MANIFEST_BUCKET, key } })).body)).toMatchObject({ batchId, created: false });
    // Tomorrow's list put at the same key: not yesterday's batch answered as if it were this one.
    const second = JSON.stringify([{ id: 'n2' }]);
    await put(LOCAL_MANIFEST_BUCKET, key, second);
    const changed = await post({ manifest: { bucket: LOCAL_MANIFEST_BUCKET, key } });
    expect(changed.statusCode).toBe(409);
    expect(JSON.parse(changed.body).message).toBe(
      `batchId: batch ${batchId} exists with the manifest s3://${LOCAL_MANIFEST_BUCKET}/${key} as it was then (ETag ${manifest.etag}); the object there has changed since (ETag ${md5(second)}): post it under another batchId to run it`,
    );
    expect((await runsOf(batchId)).map((run) => run.runId).sort()).toEqual([`${batchId}-0`, `${batchId}-1`]);
    // The earlier batch's progress lists no runs from the object now there (GetObject If-Match: S3's 412), and says why.
    expect(await get(batchId)).toMatchObject({
      status: 'SUCCEEDED',
      runs: [],
      runsUnlisted: `s3://${LOCAL_MANIFEST_BUCKET}/${key} holds another object since the batch started (not ETag ${manifest.etag}): the runs it started are not listed from it`,
    });
    // Under a batch id of its own, it runs.
    const tonight = await post({ batchId: 'nightly-2', manifest: { bucket: LOCAL_MANIFEST_BUCKET, key } });
    expect(tonight.statusCode, tonight.body).toBe(202);
    expect(await ended('nightly-2')).toMatchObject({ status: 'SUCCEEDED' });
    expect((await runsOf('nightly-2')).map((run) => run.runId)).toEqual(['nightly-2-0']);
    // The first object put back (the same bytes, the same ETag): that batch again.
    await put(LOCAL_MANIFEST_BUCKET, key, first);
    expect(JSON.parse((await post({ manifest: { bucket: LOCAL_MANIFEST_BUCKET, key } })).body)).toMatchObject({ batchId, created: false });
    expect((await get(batchId)).runs).toEqual([`${batchId}-0`, `${batchId}-1`].map((runId) => ({ runId, status: 'succeeded' })));
  });

  it('runs one run per row of a CSV file, its first row the fields, each named by its key field', async () => {
    await put(LOCAL_MANIFEST_BUCKET, 'customers.csv', 'id,name\r\nalpha,"Alpha, Inc."\r\nbeta,Beta\r\n\r\ngamma,"The ""G"""\r\n');
    const answer = await post({ batchId: 'mcsv', manifest: { bucket: LOCAL_MANIFEST_BUCKET, key: 'customers.csv' }, key: 'id' });
    expect(JSON.parse(answer.body)).toMatchObject({ manifest: { format: 'csv', itemKey: 'id' } });
    expect(await ended('mcsv')).toMatchObject({ status: 'SUCCEEDED' });
    expect((await runsOf('mcsv')).map((run) => run.runId).sort()).toEqual(['mcsv-alpha', 'mcsv-beta', 'mcsv-gamma']);
    expect((await get('mcsv')).runs).toEqual(['alpha', 'beta', 'gamma'].map((id) => ({ runId: `mcsv-${id}`, status: 'succeeded' })));
  });

  it.each([
    ['a bucket its role may not read (AccessDenied)', 'other-bucket', 'days.json', '[{"id":"a"}]', /Reading s3:\/\/other-bucket\/days\.json failed: AccessDenied/],
    ['an object that is not there (NoSuchKey)', LOCAL_MANIFEST_BUCKET, 'missing.json', undefined, /Reading s3:\/\/savepoint-local\/missing\.json failed: NoSuchKey/],
    ['JSON that holds no array', LOCAL_MANIFEST_BUCKET, 'object.json', '{"id":"a"}', /s3:\/\/savepoint-local\/object\.json holds no JSON array/],
    ['a CSV row of more fields than its header', LOCAL_MANIFEST_BUCKET, 'ragged.csv', 'id\na,b\n', /row 1 has 2 fields, the header 1/],
  ])('fails the batch with States.ItemReaderFailed, starting no run, on %s', async (_what, bucket, key, body, cause) => {
    if (body !== undefined) await put(bucket, key, body);
    const batchId = `mbad-${key.replace(/\W/g, '')}`;
    expect((await post({ batchId, manifest: { bucket, key } })).statusCode).toBe(202);
    const end = await ended(batchId);
    expect(end).toMatchObject({ status: 'FAILED', error: 'States.ItemReaderFailed' });
    expect(end.cause).toMatch(cause);
    // Its progress still answers: why the batch failed, as its execution ended; no runs listed, and why (the runs function's role meets the same IAM and the same parse).
    const progress = await get(batchId);
    expect(progress.status).toBe('FAILED');
    expect(progress).toMatchObject({ error: 'States.ItemReaderFailed', cause: end.cause });
    expect(progress.runs).toEqual([]);
    expect(progress.runsUnlisted).toMatch(cause);
    expect(await runsOf(batchId)).toEqual([]);
  });

  it('fails the batch for an item over Step Functions’ 256 KiB, and its progress says why: the error and cause its execution ended with', async () => {
    await put(LOCAL_MANIFEST_BUCKET, 'batches/one-too-large.json', JSON.stringify([{ id: 'small' }, { id: 'x'.repeat(262_144) }]));
    expect((await post({ batchId: 'mlarge', manifest: { bucket: LOCAL_MANIFEST_BUCKET, key: 'batches/one-too-large.json' }, concurrency: 1 })).statusCode).toBe(202);
    const end = await ended('mlarge');
    expect(end).toMatchObject({ status: 'FAILED', error: 'States.DataLimitExceeded' });
    // Answered as DescribeExecution answers them on AWS (lambdas/adapters/sfn.ts sfnBatches), whole.
    const progress = await get('mlarge');
    expect(progress).toMatchObject({ status: 'FAILED', error: 'States.DataLimitExceeded', cause: end.cause });
    expect(progress.cause).toMatch(/^The state\/task 'StartItemRun \(json manifest\)' was scheduled with an input with a size exceeding the maximum number of bytes service limit\.$/);
  });

  it('keeps the reading out of the execution’s history, as AWS keeps it inside the Map', async () => {
    // A batch of its own (one item), not another test's: each test stands alone.
    await put(LOCAL_MANIFEST_BUCKET, 'batches/one-day.json', JSON.stringify([{ id: 'h0' }]));
    expect((await post({ batchId: 'mhistory', manifest: { bucket: LOCAL_MANIFEST_BUCKET, key: 'batches/one-day.json' } })).statusCode).toBe(202);
    const { executionArn } = await ended('mhistory');
    const engine = await h.stack.batches.engine();
    const names = engine.getExecutionHistory(executionArn).flatMap((event) => (event.stateEnteredEventDetails ? [event.stateEnteredEventDetails.name] : []));
    expect(names).toEqual(['ItemSource?', 'ManifestFormat?', 'Items (json manifest)']);
  });
});

describe('POST /v1/batches refuses a manifest it is given wrong, naming the field, and starts nothing', () => {
  it.each([
    ['both items and a manifest', { items: [{ id: 'a' }], manifest: { bucket: LOCAL_MANIFEST_BUCKET, key: 'a.json' } }, /manifest: a batch has either items or a manifest, one of the two/],
    ['a manifest with no bucket', { manifest: { key: 'a.json' } }, /manifest\.bucket: Invalid input: expected string/],
    ['a bucket S3 could not name', { manifest: { bucket: 'Not_A_Bucket', key: 'a.json' } }, /manifest\.bucket: expected an S3 bucket name/],
    ['an empty key', { manifest: { bucket: LOCAL_MANIFEST_BUCKET, key: '' } }, /manifest\.key: expected an S3 object key/],
    ['a key longer than S3’s 1,024', { manifest: { bucket: LOCAL_MANIFEST_BUCKET, key: 'k'.repeat(1_025) } }, /manifest\.key: Too big/],
    ['a format it cannot read', { manifest: { bucket: LOCAL_MANIFEST_BUCKET, key: 'a.parquet', format: 'parquet' } }, /manifest\.format: Invalid option: expected one of "json"\|"csv"/],
    ['an unknown field of the manifest', { manifest: { bucket: LOCAL_MANIFEST_BUCKET, key: 'a.json', versionId: '3' } }, /manifest: Unrecognized key: "versionId"/],
    ['a manifest that is not an object', { manifest: 's3://savepoint-local/a.json' }, /manifest: Invalid input: expected object/],
  ])('%s (400)', async (_what, body, message) => {
    const before = (await h.stack.batches.engine()).listExecutions().executions.length;
    const answer = await post({ batchId: 'mrefused', ...body });
    expect(answer.statusCode, answer.body).toBe(400);
    expect((JSON.parse(answer.body) as { message: string }).message).toMatch(message);
    expect((await h.stack.batches.engine()).listExecutions().executions).toHaveLength(before);
  });
});

describe('the twin’s S3', () => {
  it('serves only requests that carry its credential', async () => {
    const s3 = await startS3();
    try {
      const origin = new URL(s3.endpoint).origin;
      const refused = await fetch(`${origin}/savepoint-local/a.json`);
      expect(refused.status).toBe(403);
      expect(await refused.text()).toMatch(/<Code>InvalidAccessKeyId<\/Code>/);
    } finally {
      await s3.close();
    }
  });

  it('gives each object the ETag S3 gives a single-part upload, and answers If-Match as S3 does (412 PreconditionFailed)', async () => {
    const s3 = await startS3();
    const sdk = new S3Client({ region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, endpoint: s3.endpoint, forcePathStyle: true, requestChecksumCalculation: 'WHEN_REQUIRED' });
    try {
      const body = '[{"id":"a"}]';
      const etag = `"${createHash('md5').update(body).digest('hex')}"`;
      expect((await sdk.send(new PutObjectCommand({ Bucket: 'b', Key: 'k.json', Body: body }))).ETag).toBe(etag);
      expect((await sdk.send(new HeadObjectCommand({ Bucket: 'b', Key: 'k.json' }))).ETag).toBe(etag);
      for (const ifMatch of [etag, etag.replaceAll('"', ''), '*', `"other", ${etag}`]) {
        const got = await sdk.send(new GetObjectCommand({ Bucket: 'b', Key: 'k.json', IfMatch: ifMatch }));
        expect(await got.Body!.transformToString(), ifMatch).toBe(body);
      }
      await expect(sdk.send(new GetObjectCommand({ Bucket: 'b', Key: 'k.json', IfMatch: '"0123"' }))).rejects.toMatchObject({ name: 'PreconditionFailed', $metadata: { httpStatusCode: 412 } });
      await expect(sdk.send(new HeadObjectCommand({ Bucket: 'b', Key: 'k.json', IfMatch: '"0123"' }))).rejects.toMatchObject({ $metadata: { httpStatusCode: 412 } });
      // A key that is not there: S3's 404 NoSuchKey, by which the SDK names its exception.
      await expect(sdk.send(new GetObjectCommand({ Bucket: 'b', Key: 'missing.json' }))).rejects.toMatchObject({ name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } });
      // The reader the runs function uses: a missing object has no ETag (its batch fails on it), and a changed one is not read.
      const reader = s3.objectReader();
      expect(await reader.etag('b', 'missing.json')).toBeUndefined();
      expect(await reader.etag('b', 'k.json')).toBe(etag);
      await expect(reader.text('b', 'k.json', '"0123"')).rejects.toMatchObject({ $metadata: { httpStatusCode: 412 } });
    } finally {
      sdk.destroy();
      await s3.close();
    }
  });
});

describe('an ItemReader whose read fails', () => {
  it('fails the Map with States.ItemReaderFailed, which the Map’s own Catch handles', async () => {
    const s3 = await startS3();
    const definition: AslDefinition = {
      StartAt: 'Items',
      States: {
        Items: {
          Type: 'Map',
          ItemReader: { Resource: 'arn:aws:states:::s3:getObject', ReaderConfig: { InputType: 'JSON' }, Parameters: { Bucket: 'b', Key: 'missing.json' } },
          ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' }, StartAt: 'Each', States: { Each: { Type: 'Pass', End: true } } },
          Catch: [{ ErrorEquals: ['States.ItemReaderFailed'], ResultPath: '$.unread', Next: 'Unread' }],
          End: true,
        },
        Unread: { Type: 'Pass', End: true },
      },
    };
    const reader = s3.objectReader();
    const engine = new LocalEngine({ definition, stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:reader-catch', tasks: {}, getObject: (bucket, key) => reader.text(bucket, key) });
    try {
      const { executionArn } = engine.startExecution({ name: 'caught', input: {} });
      const done = await engine.waitForExecution(executionArn);
      expect(done.status, done.cause).toBe('SUCCEEDED');
      expect(JSON.parse(done.output!).unread).toMatchObject({ Error: 'States.ItemReaderFailed', Cause: expect.stringMatching(/Reading s3:\/\/b\/missing\.json failed: NoSuchKey/) });
      const entered = engine.getExecutionHistory(executionArn).flatMap((event) => (event.stateEnteredEventDetails ? [event.stateEnteredEventDetails.name] : []));
      expect(entered).toContain('Unread');
    } finally {
      await engine.close();
      await s3.close();
    }
  });
});
