import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { headEtag, manifestRuns, MAX_BATCH_ITEMS, type ExecutionManifest } from '../../lambdas/runs/batch.js';

/**
 * A manifest batch's runs as its progress lists them (lambdas/runs/batch.ts `manifestRuns`): the
 * manifest's text parsed as the ItemReader parses it, each item named as its item step names it,
 * the first MAX_BATCH_ITEMS only; a manifest that cannot be read or parsed lists none, saying why.
 */
const json: ExecutionManifest = { bucket: 'acme-batches', key: 'days.json', format: 'json' };
const reading = (text: string) => ({ text: async () => text, etag: async () => '"e"' });
/** An agent that takes any object, and one that takes only a `date`. */
const anything = { name: 'any', input: z.object({}).passthrough() };
const dated = { name: 'daily', input: z.object({ date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'expected a date YYYY-MM-DD') }).strict() };

describe('a manifest batch’s runs', () => {
  it('lists the first MAX_BATCH_ITEMS items’ runs of a longer manifest, marked truncated', async () => {
    const items = Array.from({ length: MAX_BATCH_ITEMS + 5 }, (_, index) => ({ id: `d${index}` }));
    const listed = await manifestRuns(json, 'big', reading(JSON.stringify(items)), anything);
    expect(listed.runs).toHaveLength(MAX_BATCH_ITEMS);
    expect(listed.runs.at(-1)).toEqual({ runId: `big-${MAX_BATCH_ITEMS - 1}`, input: { id: `d${MAX_BATCH_ITEMS - 1}` } });
    expect(listed.truncated).toBe(true);
    const exact = await manifestRuns(json, 'exact', reading(JSON.stringify(items.slice(0, MAX_BATCH_ITEMS))), anything);
    expect(exact.runs).toHaveLength(MAX_BATCH_ITEMS);
    expect(exact.truncated).toBeUndefined();
  });

  it('names a CSV row’s run by its key field, and an item whose key names no run as refused under its index', async () => {
    const csv = await manifestRuns({ bucket: 'acme-batches', key: 'c.csv', format: 'csv', itemKey: 'id' }, 'csv', reading('id,name\nalpha,"A, Inc."\nbeta,B\n'), anything);
    expect(csv.runs).toEqual([
      { runId: 'csv-alpha', input: { id: 'alpha', name: 'A, Inc.' } },
      { runId: 'csv-beta', input: { id: 'beta', name: 'B' } },
    ]);
    const keyed = await manifestRuns({ ...json, itemKey: 'id' }, 'k', reading('[{"id":"a"},{"name":"no id"}]'), anything);
    expect(keyed.runs).toEqual([{ runId: 'k-a', input: { id: 'a' } }, { runId: 'k-1', refused: "items[1].id: the batch's key names each item's run, and this item has no string or number there" }]);
  });

  it('marks refused, saying why as its item step would, an item the agent’s input refuses: no run ever starts', async () => {
    const csv = await manifestRuns({ bucket: 'acme-batches', key: 'd.csv', format: 'csv', itemKey: 'date' }, 'd', reading('date\n2026-10-01\nnot-a-date\n'), dated);
    expect(csv.runs).toEqual([{ runId: 'd-2026-10-01', input: { date: '2026-10-01' } }, { runId: 'd-not-a-date', refused: 'invalid input of agent daily: date: expected a date YYYY-MM-DD' }]);
  });

  it('lists none, saying why, for a manifest it cannot read, cannot parse, or has no reader for', async () => {
    const denied = Object.assign(new Error('Access Denied'), { name: 'AccessDenied' });
    expect(await manifestRuns(json, 'b', { text: async () => Promise.reject(denied), etag: async () => undefined }, anything)).toEqual({ runs: [], unlisted: 'Reading s3://acme-batches/days.json failed: AccessDenied: Access Denied' });
    expect((await manifestRuns(json, 'b', reading('{"id":1}'), anything)).unlisted).toMatch(/holds no JSON array/);
    expect(await manifestRuns(json, 'b', undefined, anything)).toEqual({ runs: [], unlisted: 'this API reads no manifests' });
  });
});

describe('headEtag (the ETag a manifest batch records as it starts)', () => {
  const failing = (status: number | undefined) => async () => Promise.reject(Object.assign(new Error(`S3 ${status}`), status === undefined ? {} : { $metadata: { httpStatusCode: status } }));

  it('is the object’s ETag, and none for an object S3 will not show (missing, denied, another region): its batch starts and fails on it', async () => {
    expect(await headEtag(async () => ({ ETag: '"abc"' }))).toBe('"abc"');
    for (const status of [301, 403, 404]) expect(await headEtag(failing(status)), String(status)).toBeUndefined();
  });

  it('throws a failure of S3’s side or of the network, for the caller to retry', async () => {
    await expect(headEtag(failing(503))).rejects.toThrow('S3 503');
    await expect(headEtag(failing(undefined))).rejects.toThrow('S3 undefined');
  });
});
