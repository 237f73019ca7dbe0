import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { openJournal } from '../../sim/journal.js';
import { Day, type RefundRequest } from '../../agents/refund-reconciler/domain.js';
import { HttpCommerceApi } from '../../agents/refund-reconciler/payments-client.js';
import { startPaymentsServer, type PaymentsServer } from '../../agents/refund-reconciler/sim/payments-server.js';

/**
 * The provider's journal is append-only JSON lines. A process killed mid-append leaves a last line
 * without its newline: opening the journal cuts it off and says so, and everything after works.
 */

const day = Day.parse(JSON.parse(readFileSync(new URL('../../agents/refund-reconciler/sample-day.json', import.meta.url), 'utf8')));
const refundable = day.refundRequests.filter(
  (request) =>
    !day.refunds.some((refund) => refund.refundRequestId === request.id) &&
    request.amountCents <= (day.orders.find((order) => order.id === request.orderId)?.totalCents ?? 0),
);
const refundOf = (request: RefundRequest) => ({ paymentId: request.paymentId, amountCents: request.amountCents, reason: request.reason, refundRequestId: request.id });

const dir = mkdtempSync(join(tmpdir(), 'savepoint-journal-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const servers: PaymentsServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((server) => server.close()));
});
async function open(dataFile: string) {
  const server = await startPaymentsServer({ day, dataFile });
  servers.push(server);
  return { server, api: new HttpCommerceApi({ baseUrl: server.url, timeoutMs: 2_000 }) };
}

/** A journal with two refunds written by a real server, and the line a third would append. */
async function journalWithTwoRefunds(name: string): Promise<{ dataFile: string; clean: Buffer; nextLine: Buffer }> {
  const dataFile = join(dir, `${name}.jsonl`);
  const { server, api } = await open(dataFile);
  await api.createRefund(refundOf(refundable[0]!), 'key-1');
  await api.createRefund(refundOf(refundable[1]!), 'key-2');
  const clean = readFileSync(dataFile);
  await api.createRefund(refundOf(refundable[2]!), 'key-3');
  await server.close();
  const nextLine = readFileSync(dataFile).subarray(clean.length);
  writeFileSync(dataFile, clean);
  return { dataFile, clean, nextLine };
}

describe("the payments provider's journal", () => {
  it.each([
    ['one byte', 1],
    ['inside the key', 25],
    ['half of it', 0.5],
    ['all but the newline', -1],
  ])('recovers a last line torn after %s: cut off, reported, and later appends and restarts work', async (_case, cut) => {
    const { dataFile, clean, nextLine } = await journalWithTwoRefunds(`torn-${String(cut)}`);
    const at = cut === -1 ? nextLine.length - 1 : cut < 1 ? Math.floor(nextLine.length * cut) : cut;
    appendFileSync(dataFile, nextLine.subarray(0, at)); // the kill landed mid-append

    const reopened = await open(dataFile);
    expect(reopened.server.recovered).toMatch(new RegExp(`${dataFile}:3: dropped a torn last line \\(${at} bytes`));
    expect(readFileSync(dataFile)).toEqual(clean);
    expect(reopened.server.refunds()).toHaveLength(2);
    // The torn request was never answered: its key pays now, once, after the two kept refunds.
    expect(await reopened.api.createRefund(refundOf(refundable[2]!), 'key-3')).toMatchObject({ id: 're_0003' });
    await reopened.server.close();

    const again = await open(dataFile);
    expect(again.server.recovered).toBeUndefined();
    expect(again.server.refunds().map((refund) => refund.id)).toEqual(['re_0001', 're_0002', 're_0003']);
    expect(await again.api.listRefunds()).toHaveLength(3);
  });

  it('opens a journal that ends cleanly without a note', async () => {
    const { dataFile } = await journalWithTwoRefunds('clean');
    const { server } = await open(dataFile);
    expect(server.recovered).toBeUndefined();
    expect(server.refunds()).toHaveLength(2);
  });

  it.each([
    ['garbage', 'not json\n', 1],
    ['a torn line that a later append landed on', null, 2],
    ['an empty line', '\n', 2],
  ])('refuses a corrupt line that is not the last (%s), naming the file and line, and changes nothing', async (_case, damage, line) => {
    const { dataFile, clean, nextLine } = await journalWithTwoRefunds(`corrupt-${line}-${String(damage?.length)}`);
    const lines = clean.toString('utf8').split('\n');
    const damaged =
      damage === null
        ? `${lines[0]}\n${lines[1]!.slice(0, 30)}${nextLine.toString('utf8')}` // what the old journal did after a kill
        : line === 1
          ? `${damage}${lines[1]}\n`
          : `${lines[0]}\n${damage}${lines[1]}\n`;
    writeFileSync(dataFile, damaged);
    await expect(startPaymentsServer({ day, dataFile })).rejects.toThrow(`${dataFile}:${line}: corrupt journal line`);
    expect(readFileSync(dataFile, 'utf8')).toBe(damaged);
  });
});

describe('openJournal', () => {
  const Entry = z.object({ n: z.number() });
  it('shows in `entries` what was appended after it was opened, by itself and by another process, a line only once complete', () => {
    const dataFile = join(dir, 'live.jsonl');
    writeFileSync(dataFile, '{"n":1}\n');
    const journal = openJournal(dataFile, Entry);
    const other = openJournal(dataFile, Entry);
    try {
      expect(journal.entries).toEqual([{ n: 1 }]);
      journal.append({ n: 2 });
      // Another writer (a killed engine's provider writes the same file): half a line, then the rest.
      appendFileSync(dataFile, '{"n":');
      expect(journal.entries).toEqual([{ n: 1 }, { n: 2 }]);
      appendFileSync(dataFile, '3}\n');
      expect(journal.entries).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
      expect(other.entries).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
    } finally {
      journal.close();
      other.close();
    }
  });

  it('names the line of a corrupt entry appended after it was opened', () => {
    const dataFile = join(dir, 'live-corrupt.jsonl');
    writeFileSync(dataFile, '{"n":1}\n');
    const journal = openJournal(dataFile, Entry);
    try {
      appendFileSync(dataFile, '{"n":2}\nnot json\n');
      expect(() => journal.entries).toThrow(`${dataFile}:3: corrupt journal line`);
    } finally {
      journal.close();
    }
  });
});
