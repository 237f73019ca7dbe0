import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { RemoteLedger, serveLedger } from '../../lambdas/ledger/remote-ledger.js';
import { describeLedgerContract } from './ledger.contract.js';
import { at } from './fixtures.js';
import { fourRuns } from './spec/prune.js';

// A running engine's embedded ledger as the other CLI commands reach it: over loopback HTTP.
describeLedgerContract('remote, served from an embedded ledger in memory', async () => {
  const served = serveLedger(EmbeddedLedger.open());
  const endpoint = await served;
  const clients = [RemoteLedger.connect(endpoint.url)];
  return {
    ledger: clients[0]!,
    // Another command of this machine, reaching the same engine.
    another: () => clients[clients.push(RemoteLedger.connect(endpoint.url)) - 1]!,
    close: async () => {
      for (const client of clients) client.close();
      await endpoint.close();
    },
  };
}, { sharesStore: true, prunes: false, tellsSeen: false });

describe('the ledger endpoint', () => {
  const closers: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const close of closers.splice(0)) await close();
  });
  const serve = async () => {
    const endpoint = await serveLedger(EmbeddedLedger.open());
    closers.push(endpoint.close);
    return endpoint;
  };
  const post = (url: string, body: string) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });

  it('refuses a request that is not a ledger call, naming what is wrong', async () => {
    const { url } = await serve();
    for (const [body, message] of [
      ['not json', /not JSON/],
      ['{"method":"dropTable","args":[]}', /Ledger method/],
      ['{"method":"getRun","args":"r1"}', /Ledger method/],
      ['{"method":"claimCall","args":[{},"yesterday"]}', /argument 2 must be an ISO date-time/],
    ] as const) {
      const response = await post(url, body);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(message);
    }
  });

  it('answers nobody who does not know its secret path', async () => {
    const { url } = await serve();
    const response = await post(new URL('/ledger/guess', url).href, '{"method":"listRuns","args":[]}');
    expect(response.status).toBe(404);
  });

  it("hands a method's own failure back under its name", async () => {
    const { url } = await serve();
    const ledger = RemoteLedger.connect(url);
    closers.push(() => ledger.close());
    await expect(ledger.completeCall({ runId: 'r1', turn: 1, call: 1, outcome: { outcome: 'ok', result: '1', latencyMs: 1 }, now: new Date() })).rejects.toMatchObject({
      name: 'ConditionalCheckFailedException',
    });
  });

  it('says the engine is unreachable when nothing listens', async () => {
    const endpoint = await serveLedger(EmbeddedLedger.open());
    await endpoint.close();
    const ledger = RemoteLedger.connect(endpoint.url);
    closers.push(() => ledger.close());
    await expect(ledger.listRuns()).rejects.toThrow(/unreachable/);
  });

  it("serves the prune records and a prune's plan to read, as the engine's own ledger answers them", async () => {
    const embedded = EmbeddedLedger.open();
    const endpoint = await serveLedger(embedded);
    closers.push(endpoint.close);
    const remote = RemoteLedger.connect(endpoint.url);
    closers.push(() => remote.close());
    await fourRuns(embedded);
    // a succeeded at 10 s, b was killed at 20 s: the prune before 15 s takes a.
    const records = await embedded.prune(at(15), at(100));
    expect(records.map((record) => record.runIds)).toEqual([['a']]);
    expect(await remote.prunes()).toEqual(records);
    expect(await remote.planPrune(at(25))).toEqual({ prune: ['b'], kept: [] });
    expect(await remote.planPrune(at(25))).toEqual(await embedded.planPrune(at(25)));
  });

  it('refuses an endpoint that is not on loopback', () => {
    expect(() => RemoteLedger.connect('http://example.com/ledger/x')).toThrow(/loopback/);
  });
});
