import { describe, expect, it } from 'vitest';
import { BlobIntegrityError, copyResult, cutResult, parseBlobRef, readEffectResult, readResult, resolveResults, storeCallResult, storeResult, type BlobRef } from '../../../lambdas/ledger/blobs.js';
import { run, call } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/** The blobs role (`BlobStore`): large values by reference. */
export function blobsSpec(make: MakeLedger): void {
  describe('blobs', () => {
    const { ledger } = useLedger(make);

    describe('large values by reference (blobs)', () => {
      const big = 'é'.repeat(200_000) + '{"x":"🙂"}'.repeat(30_000); // ~700 KB of multi-byte text: three chunks

      it('stores a large tool result in chunks and reads back exactly the text, verified', async () => {
        const ref = await storeResult(ledger, 'r1', big);
        expect(parseBlobRef(ref)).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), bytes: Buffer.byteLength(big) });
        expect((await ledger.getBlob('r1', parseBlobRef(ref)!.sha256)).length).toBe(3);
        expect(await readResult(ledger, 'r1', parseBlobRef(ref)!)).toBe(big);
      });

      it('keeps a result under the limit as it is', async () => {
        expect(await storeResult(ledger, 'r1', '{"ok":true}')).toBe('{"ok":true}');
      });

      it('is idempotent: storing the same value again changes nothing', async () => {
        const first = await storeResult(ledger, 'r1', big);
        expect(await storeResult(ledger, 'r1', big)).toBe(first);
        expect(await readResult(ledger, 'r1', parseBlobRef(first)!)).toBe(big);
      });

      it('keeps blobs apart by run and digest, and out of the conversation and the run list', async () => {
        await ledger.createRun(run('r1'));
        await storeResult(ledger, 'r1', big);
        expect(await ledger.getBlob('r2', parseBlobRef(await storeResult(ledger, 'r1', big))!.sha256)).toEqual([]);
        expect(await ledger.getBlob('r1', 'f'.repeat(64))).toEqual([]);
        expect(await ledger.listConversation('r1')).toEqual({ turns: [], calls: [], approvals: [], run: await ledger.getRun('r1') });
        expect((await ledger.listRuns()).map((r) => r.runId)).toEqual(['r1']);
      });

      it('names a missing or damaged blob instead of passing it on', async () => {
        const ref = parseBlobRef(await storeResult(ledger, 'r1', big))!;
        await expect(readResult(ledger, 'r1', { ...ref, sha256: 'a'.repeat(64) })).rejects.toThrow(/ledger integrity: run r1, stored tool result a{64} .* no chunk found/);
        // Chunks that do not hash to the reference: the first chunk replaced.
        const chunks = await ledger.getBlob('r1', ref.sha256);
        await ledger.putBlob('r1', ref.sha256, ['X'.repeat(Buffer.byteLength(chunks[0]!)), ...chunks.slice(1)]);
        await expect(readResult(ledger, 'r1', ref)).rejects.toThrow(BlobIntegrityError);
        await expect(readResult(ledger, 'r1', ref)).rejects.toThrow(/do not match the digest/);
      });

      it("keeps a business-key effect's result under the effect, apart from its run's blobs and other effects'", async () => {
        const key = 'refunds:issue_refund:rr_1';
        const stored = await storeCallResult(ledger, 'r1', big, undefined, key);
        const ref = parseBlobRef(stored)!;
        expect((await ledger.getEffectBlob(key, ref.sha256)).length).toBe(3);
        expect(await readEffectResult(ledger, key, ref)).toBe(big);
        expect(await readResult(ledger, 'r1', ref)).toBe(big);
        // Another effect's, or a run's partition under the effect's key, holds none of it.
        expect(await readEffectResult(ledger, 'refunds:issue_refund:rr_2', ref)).toBeUndefined();
        expect(await ledger.getBlob(key, ref.sha256)).toEqual([]);
        // Neither the effect's record nor its shared approval is disturbed.
        expect(await ledger.getEffect(key)).toBeUndefined();
        expect(await ledger.getEffectApproval(key)).toBeUndefined();
        await ledger.putEffectBlob(key, ref.sha256, ['X', ...(await ledger.getEffectBlob(key, ref.sha256)).slice(1)]);
        await expect(readEffectResult(ledger, key, ref)).rejects.toThrow(/^ledger integrity: effect refunds:issue_refund:rr_1, stored tool result [0-9a-f]{64} \(\d+ bytes\) fails verification: the chunks hold \d+ bytes$/);
      });

      it("keeps the whole of a business-key effect's result cut for the model under the effect, which the cut names", async () => {
        const key = 'refunds:issue_refund:rr_1';
        const shown = await cutResult(big, 1_000, (whole) => storeCallResult(ledger, 'r1', whole, 0, key));
        const ref = parseBlobRef((JSON.parse(shown) as { stored: string }).stored)!;
        expect(await readEffectResult(ledger, key, ref)).toBe(big);
        expect(await readResult(ledger, 'r1', ref)).toBe(big);
      });

      it('copies a result to another run with what it references, the whole of a cut included, so its references resolve there', async () => {
        const shown = await cutResult(big, 1_000, (whole) => storeResult(ledger, 'r1', whole, 0));
        const read = (ref: BlobRef) => readResult(ledger, 'r1', ref);
        const ref = parseBlobRef((JSON.parse(shown) as { stored: string }).stored)!;
        expect(await ledger.getBlob('r2', ref.sha256)).toEqual([]);
        expect(await copyResult(ledger, 'r2', shown, read)).toBe(shown);
        expect(await readResult(ledger, 'r2', ref)).toBe(big);
        // A result stored by reference, itself a cut (a maxResultTokens over 64 KiB): both copied.
        const large = await cutResult(big, 100_000, (whole) => storeResult(ledger, 'r1', whole, 0));
        const stored = await storeResult(ledger, 'r1', large, 0);
        expect(await copyResult(ledger, 'r3', stored, read)).toBe(stored);
        expect(await readResult(ledger, 'r3', parseBlobRef(stored)!)).toBe(large);
        expect(await readResult(ledger, 'r3', ref)).toBe(big);
      });

      it('copies a cut whose whole is no longer kept as its head, saying so, no longer than it was; a result no longer kept as nothing', async () => {
        const shown = await cutResult(big, 1_000, async (whole) => `blob:v1:${'a'.repeat(64)}:${Buffer.byteLength(whole)}`);
        const copied = await copyResult(ledger, 'r2', shown, async () => undefined);
        const { stored: _stored, ...head } = JSON.parse(shown) as Record<string, unknown>;
        expect(JSON.parse(copied!)).toEqual({ ...head, stored: null, message: 'the whole of this result is no longer kept: only its head is' });
        expect(Buffer.byteLength(copied!)).toBeLessThanOrEqual(Buffer.byteLength(shown));
        expect(await copyResult(ledger, 'r2', `blob:v1:${'a'.repeat(64)}:9`, async () => undefined)).toBeUndefined();
      });

      it("copies a tool's own JSON that only looks like a cut as it is, reading nothing", async () => {
        const ref = `blob:v1:${'a'.repeat(64)}:2000`;
        const read = async (): Promise<string> => {
          throw new Error('read');
        };
        for (const text of [
          JSON.stringify({ truncated: true, bytes: 1999, head: 'x', stored: ref }),
          JSON.stringify({ truncated: true, bytes: 2000, head: 'x', stored: ref, more: 1 }),
          JSON.stringify({ truncated: true, head: 'x', bytes: 2000, stored: ref }),
          JSON.stringify({ truncated: true, bytes: 2000, head: 'x', stored: 'elsewhere' }),
        ]) {
          expect(await copyResult(ledger, 'r2', text, read)).toBe(text);
        }
      });

      it('resolves the references of tool calls, and leaves other results alone', async () => {
        const ref = await storeResult(ledger, 'r1', big);
        const calls = [call({ status: 'completed', result: ref }), call({ call: 2, status: 'completed', result: '{"small":1}' })];
        const resolved = await resolveResults(ledger, calls);
        expect(resolved.map((c) => c.result)).toEqual([big, '{"small":1}']);
      });
    });
  });
}
