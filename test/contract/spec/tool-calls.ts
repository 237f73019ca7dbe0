import { describe, expect, it } from 'vitest';
import { type ToolCallRecord } from '../../../lambdas/records/ledger-records.js';
import type { StepBasis, TurnSeen } from '../../../lambdas/ledger/ledger.js';
import { handedContent } from '../../../lambdas/ledger/handed-versions.js';
import { at, call, holder, kill, releasedAt, run, turn } from '../fixtures.js';
import { useLedger, type MakeLedger } from './support.js';

/** The tool calls role (`ToolCallLedger`): claims, leases, records and completions. */
export function toolCallsSpec(make: MakeLedger, options: { tellsSeen?: boolean; marksVersions?: boolean } = {}): void {
  describe('tool calls', () => {
    const { ledger, under } = useLedger(make);
    /** A write refused on the versions it was given (StepChangedError): nothing written. */
    const changed = /handed or read changed/;

    describe('claiming a tool call', () => {
      it('claims a call with no record: stored as given, in flight, first attempt', async () => {
        const claim = await ledger.claimCall(call(), at(0));
        expect(claim).toEqual({ claimed: true, record: { ...call(), status: 'in_flight', attempts: 1 } });
        expect(await ledger.getCall('r1', 3, 1)).toEqual({ ...call(), status: 'in_flight', attempts: 1 });
      });

      it('stores arguments from outside as given, keys that name object methods included', async () => {
        // Tool arguments come from the model. (An own "__proto__" key is the one exception: the
        // AWS SDK's marshalling drops it; the embedded ledger keeps it, as a plain key.)
        const args = JSON.parse('{"constructor":"c","toString":{"valueOf":1},"emoji":"✓","deep":[[{"a":null}]]}') as Record<string, unknown>;
        await ledger.claimCall(call({ args }), at(0));
        expect((await ledger.getCall('r1', 3, 1))!.args).toEqual(args);
      });

      it('is undefined for a call never claimed', async () => {
        expect(await ledger.getCall('r1', 3, 1)).toBeUndefined();
      });

      it('lets exactly one of 50 concurrent attempts claim it', async () => {
        const claims = await Promise.all(Array.from({ length: 50 }, () => ledger.claimCall(call(), at(0))));
        expect(claims.filter((claim) => claim.claimed)).toHaveLength(1);
        for (const claim of claims) if (!claim.claimed) expect(claim.existing).toMatchObject({ status: 'in_flight', attempts: 1 });
        expect((await ledger.getCall('r1', 3, 1))!.attempts).toBe(1);
      });

      it('refuses a second claim while the lease is live, and allows a takeover once it expired', async () => {
        await ledger.claimCall(call(), at(0));
        const blocked = await ledger.claimCall(call({ leaseUntil: at(60).toISOString() }), at(10));
        expect(blocked).toMatchObject({ claimed: false, existing: { status: 'in_flight', attempts: 1, leaseUntil: at(30).toISOString() } });
        const takeover = await ledger.claimCall(call({ leaseUntil: at(90).toISOString() }), at(31));
        expect(takeover).toMatchObject({ claimed: true, record: { attempts: 2, leaseUntil: at(90).toISOString(), idempotencyKey: 'r1:3:toolu_003_1' } });
      });

      it('refuses a takeover at the very instant the lease ends', async () => {
        await ledger.claimCall(call(), at(0));
        expect(await ledger.claimCall(call(), at(30))).toMatchObject({ claimed: false });
      });

      it('lets exactly one of 50 concurrent takeovers of an expired lease win', async () => {
        await ledger.claimCall(call(), at(0));
        const claims = await Promise.all(Array.from({ length: 50 }, () => ledger.claimCall(call({ leaseUntil: at(200).toISOString() }), at(100))));
        expect(claims.filter((claim) => claim.claimed)).toHaveLength(1);
        expect((await ledger.getCall('r1', 3, 1))!.attempts).toBe(2);
      });

      it('never reclaims a completed call: a retry gets the recorded outcome', async () => {
        await ledger.claimCall(call(), at(0));
        await ledger.completeCall({ runId: 'r1', turn: 3, call: 1, outcome: { outcome: 'ok', result: '{"id":"re_1"}', latencyMs: 5 }, now: at(1) });
        const again = await ledger.claimCall(call(), at(3600));
        expect(again).toMatchObject({ claimed: false, existing: { status: 'completed', result: '{"id":"re_1"}' } });
      });

      it('keeps calls of other turns, calls and runs apart', async () => {
        await ledger.claimCall(call(), at(0));
        expect(await ledger.claimCall(call({ call: 2 }), at(0))).toMatchObject({ claimed: true });
        expect(await ledger.claimCall(call({ turn: 4 }), at(0))).toMatchObject({ claimed: true });
        expect(await ledger.claimCall(call({ runId: 'r2' }), at(0))).toMatchObject({ claimed: true });
      });
    });

    describe('recording a call without a claim (a read)', () => {
      const completed = (overrides: Partial<ToolCallRecord> = {}) =>
        ({ ...call({ effect: 'read', ...overrides }), status: 'completed', outcome: 'ok', result: '{"order":1}', latencyMs: 2, recordedAt: at(1).toISOString() }) as ToolCallRecord & {
          status: 'completed';
        };

      it('records a call with no record, completed, first attempt', async () => {
        expect(await ledger.recordCall(completed(), at(0))).toEqual({ recorded: true, record: { ...completed(), attempts: 1 } });
        expect(await ledger.getCall('r1', 3, 1)).toEqual({ ...completed(), attempts: 1 });
      });

      it('keeps the first outcome: a second recording returns it', async () => {
        await ledger.recordCall(completed(), at(0));
        expect(await ledger.recordCall(completed({ call: 1, toolCallId: 'toolu_003_1' }), at(5))).toMatchObject({ recorded: false, existing: { result: '{"order":1}' } });
        const again = await ledger.recordCall({ ...completed(), result: 'other' }, at(5));
        expect(again).toMatchObject({ recorded: false, existing: { status: 'completed', result: '{"order":1}', attempts: 1 } });
      });

      it('lets exactly one of 50 concurrent recordings win', async () => {
        const results = await Promise.all(Array.from({ length: 50 }, (_, index) => ledger.recordCall({ ...completed(), result: String(index) }, at(0))));
        const winners = results.filter((result) => result.recorded);
        expect(winners).toHaveLength(1);
        expect((await ledger.getCall('r1', 3, 1))!.result).toBe(winners[0]!.record.result);
      });

      it('takes over an in-flight call only once its lease expired', async () => {
        await ledger.claimCall(call(), at(0));
        expect(await ledger.recordCall(completed(), at(30))).toMatchObject({ recorded: false, existing: { status: 'in_flight' } });
        expect(await ledger.recordCall(completed(), at(31))).toMatchObject({ recorded: true, record: { status: 'completed', attempts: 2 } });
      });
    });

    // A read call handed what its turn's write left (steps/handed-step.ts): recorded unread, on the
    // versions of the run item and the kill item that write named (TurnSeen `basis`). A ledger
    // reached over loopback cannot call `seen` back: its callers read, and are handed nothing.
    describe.skipIf(options.tellsSeen === false)('recording a read on the versions a turn handed its calls', () => {
      const completed = (overrides: Partial<ToolCallRecord> = {}) =>
        ({ ...call({ effect: 'read', ...overrides }), status: 'completed', outcome: 'ok', result: '{"order":1}', latencyMs: 2, recordedAt: at(1).toISOString() }) as ToolCallRecord & {
          status: 'completed';
        };
      /** Run r1 with turn 3 recorded and counted, and the basis its write hands its calls, given back with what was handed. */
      const handedTurn = async (): Promise<TurnSeen & { basis: StepBasis }> => {
        await ledger.createRun(run('r1'));
        let seen: TurnSeen | undefined;
        await ledger.recordTurn(turn(3), { stepKey: 'turn:3', deltas: { steps: 1, modelTurns: 1 }, handing: (saw) => (seen = saw) });
        // Told with the sealed text of what is handed: the run as written and the turn as recorded.
        expect(seen?.basis).toEqual({ run: expect.any(String), kill: null, mac: expect.any(String), content: handedContent(seen!.run, seen!.globalKill, turn(3)) });
        return seen as TurnSeen & { basis: StepBasis };
      };

      it('records the call, and leaves the run item as the turn wrote it', async () => {
        const seen = await handedTurn();
        expect(await ledger.recordCall(completed(), at(2), undefined, seen.basis)).toEqual({ recorded: true, record: { ...completed(), attempts: 1 } });
        expect(await ledger.getCall('r1', 3, 1)).toEqual({ ...completed(), attempts: 1 });
        expect(await ledger.getRun('r1')).toEqual(seen.run);
        // Nothing it wrote is another version of either item: the turn's next call records on the same.
        expect(await ledger.recordCall(completed({ call: 2, toolCallId: 'toolu_003_2' }), at(2), undefined, seen.basis)).toMatchObject({ recorded: true });
      });

      it('records it all the same once the run item changed since (a kill of the run while it ran): a read keeps its result, as any call in flight', async () => {
        const seen = await handedTurn();
        await ledger.killRun('r1', kill('operator'));
        expect(await ledger.recordCall(completed(), at(2), undefined, seen.basis)).toMatchObject({ recorded: true });
        expect(await ledger.getCall('r1', 3, 1)).toEqual({ ...completed(), attempts: 1 });
        expect(await ledger.getRun('r1')).toMatchObject({ killed: { by: 'operator' } });
      });

      it('records it all the same once the kill of all runs was set since', async () => {
        const seen = await handedTurn();
        await ledger.setGlobalKill(kill('operator'));
        expect(await ledger.recordCall(completed(), at(2), undefined, seen.basis)).toMatchObject({ recorded: true });
        expect(await ledger.getCall('r1', 3, 1)).toEqual({ ...completed(), attempts: 1 });
      });

      it('answers the record there already (a retry) and writes nothing over it: the first stands', async () => {
        const seen = await handedTurn();
        await ledger.recordCall(completed(), at(2), undefined, seen.basis);
        expect(await ledger.recordCall({ ...completed(), result: 'other' }, at(3), undefined, seen.basis)).toEqual({ recorded: false, existing: { ...completed(), attempts: 1 } });
        expect((await ledger.getCall('r1', 3, 1))!.result).toBe('{"order":1}');
      });

      it('checks a handed state against its seal without writing anything: the one sealed passes, one made up is refused', async () => {
        const seen = await handedTurn();
        await expect(ledger.checkHanded('r1', seen.basis)).resolves.toBeUndefined();
        // The same content checked again under another seal or version: checked, not taken as found before.
        await expect(ledger.checkHanded('r1', { ...seen.basis, mac: 'not-its-seal' })).rejects.toThrow(changed);
        await expect(ledger.checkHanded('r1', { ...seen.basis, run: 'not-a-version' })).rejects.toThrow(changed);
        await expect(ledger.checkHanded('r1', { ...seen.basis, kill: seen.basis.run })).rejects.toThrow(changed);
        await expect(ledger.checkHanded('r2', seen.basis)).rejects.toThrow(changed);
        await expect(ledger.checkHanded('r1', { ...seen.basis, content: handedContent({ ...seen.run, config: { ...seen.run.config, maxSteps: 1_000_000 } }, undefined, turn(3)) })).rejects.toThrow(changed);
        await expect(ledger.checkHanded('r1', { ...seen.basis, mac: 'not-its-seal' })).rejects.toThrow(changed);
        expect(await ledger.getCall('r1', 3, 1)).toBeUndefined();
      });

      it('claims a write with its effect, and leaves the run item as the turn wrote it', async () => {
        const seen = await handedTurn();
        expect(await ledger.claimCall(call(), at(0), holder(), seen.basis)).toMatchObject({ claimed: true, record: { status: 'in_flight', attempts: 1 }, effect: { status: 'in_flight', attempts: 1 } });
        expect(await ledger.getEffect(holder().key)).toMatchObject({ status: 'in_flight', runId: 'r1', turn: 3, call: 1 });
        expect(await ledger.claimCall(call({ call: 2, toolCallId: 'toolu_003_2', name: 'post_report' }), at(0), undefined, seen.basis)).toMatchObject({ claimed: true });
        expect(await ledger.getRun('r1')).toEqual(seen.run);
      });

      it('claims nothing once the run item changed since (a kill of the run): neither the call nor its effect', async () => {
        const seen = await handedTurn();
        await ledger.killRun('r1', kill('operator'));
        await expect(ledger.claimCall(call(), at(0), holder(), seen.basis)).rejects.toThrow(changed);
        expect(await ledger.getCall('r1', 3, 1)).toBeUndefined();
        expect(await ledger.getEffect(holder().key)).toBeUndefined();
      });

      it('claims nothing once the kill of all runs was set since', async () => {
        const seen = await handedTurn();
        await ledger.setGlobalKill(kill('operator'));
        await expect(ledger.claimCall(call(), at(0), undefined, seen.basis)).rejects.toThrow(changed);
        expect(await ledger.getCall('r1', 3, 1)).toBeUndefined();
      });

      it('claims nothing over a claim there already (a retry): its caller reads, and the lease rules decide', async () => {
        const seen = await handedTurn();
        await ledger.claimCall(call(), at(0), holder(), seen.basis);
        await expect(ledger.claimCall(call(), at(40), holder(), seen.basis)).rejects.toThrow(changed);
        expect(await ledger.getCall('r1', 3, 1)).toMatchObject({ status: 'in_flight', attempts: 1 });
      });

      it('answers an effect another run completed with its record, and writes nothing', async () => {
        const seen = await handedTurn();
        await ledger.claimCall(call({ runId: 'r2' }), at(0), holder({ runId: 'r2' }));
        await ledger.completeCall({ runId: 'r2', turn: 3, call: 1, outcome: { outcome: 'ok', result: '{"id":"re_1"}', latencyMs: 1 }, now: at(1), effect: { key: holder().key } });
        expect(await ledger.claimCall(call(), at(2), holder(), seen.basis)).toMatchObject({ claimed: false, effect: { status: 'completed', runId: 'r2', result: '{"id":"re_1"}' } });
        expect(await ledger.getCall('r1', 3, 1)).toBeUndefined();
      });

      it('writes nothing on versions it never named', async () => {
        const seen = await handedTurn();
        await expect(ledger.recordCall(completed(), at(2), undefined, { ...seen.basis, run: 'not-a-version' })).rejects.toThrow(changed);
        expect(await ledger.getCall('r1', 3, 1)).toBeUndefined();
      });

      it('writes nothing for a state other than the one its versions were sealed with (one made up elsewhere)', async () => {
        const seen = await handedTurn();
        const forged = { ...turn(3), content: [{ type: 'tool_use', id: 'toolu_003_1', name: 'issue_refund', input: { amountCents: 99_999 } }] };
        await expect(ledger.claimCall(call(), at(0), undefined, { ...seen.basis, content: handedContent(seen.run, undefined, forged as never) })).rejects.toThrow(changed);
        await expect(ledger.recordCall(completed(), at(2), undefined, { ...seen.basis, mac: 'not-its-seal' })).rejects.toThrow(changed);
        await expect(ledger.recordCall(completed(), at(2), undefined, { ...seen.basis, content: undefined })).rejects.toThrow(changed);
        expect(await ledger.getCall('r1', 3, 1)).toBeUndefined();
      });
    });

    // A write call that read first (a retry, a call that waited for a person or a child run, one
    // that starts late): its claim holds only while the run item and the kill item are still the
    // versions its read found (StepRead `versions`, asked for), on the call as the engine knows it. A
    // ledger that marks no version (a replay's) tells none, and its claims are conditioned on their own items.
    describe.skipIf(options.marksVersions === false)('claiming a write on the versions the step read', () => {
      /** Run r1 with turn 3, and the step's read of it: the run, the kill, the call asked for. */
      const readStep = async () => {
        const read = await ledger.loadStep('r1', { turns: [3], calls: [{ turn: 3, call: 1 }], versions: true });
        expect(read.versions).toMatchObject({ run: expect.any(String) });
        return read;
      };
      const started = async () => {
        await ledger.createRun(run('r1'));
        await ledger.recordTurn(turn(3));
      };

      it('tells the versions only when asked, and none for a run that is not there', async () => {
        await started();
        expect(await ledger.loadStep('r1', { turns: [3] })).not.toHaveProperty('versions');
        expect(await ledger.loadStep('nope', { versions: true })).toEqual({ turns: [], calls: [] });
        // The kill of all runs absent: null; set: a version of it.
        expect((await readStep()).versions!.kill).toBeNull();
        await ledger.setGlobalKill(kill('ops'));
        expect((await readStep()).versions!.kill).toEqual(expect.any(String));
      });

      it('claims a write with its effect on them, and leaves the run item as it was', async () => {
        await started();
        const read = await readStep();
        expect(await ledger.claimCall(call(), at(0), holder(), read.versions)).toMatchObject({ claimed: true, record: { status: 'in_flight', attempts: 1 }, effect: { status: 'in_flight', attempts: 1 } });
        expect(await ledger.getEffect(holder().key)).toMatchObject({ status: 'in_flight', runId: 'r1', turn: 3, call: 1 });
        // Nothing it wrote is another version of either item: a sibling call claims on the same read.
        expect(await ledger.claimCall(call({ call: 2, toolCallId: 'toolu_003_2', name: 'post_report' }), at(0), undefined, read.versions)).toMatchObject({ claimed: true });
        expect(await ledger.getRun('r1')).toEqual(read.run);
      });

      it('takes over the claim it read, once expired (a retry), and answers one still live', async () => {
        await started();
        await ledger.claimCall(call(), at(0), holder());
        expect(await ledger.claimCall(call(), at(10), holder(), (await readStep()).versions)).toMatchObject({ claimed: false, existing: { status: 'in_flight', attempts: 1 } });
        const read = await readStep();
        expect(read.calls).toEqual([expect.objectContaining({ status: 'in_flight', attempts: 1 })]);
        expect(await ledger.claimCall(call({ leaseUntil: at(90).toISOString() }), at(31), holder({ leaseUntil: at(90).toISOString() }), read.versions)).toMatchObject({ claimed: true, record: { attempts: 2 } });
        expect(await ledger.getCall('r1', 3, 1)).toMatchObject({ status: 'in_flight', attempts: 2, leaseUntil: at(90).toISOString() });
      });

      it('claims nothing once the kill of all runs was set after the read: neither the call nor its effect', async () => {
        await started();
        const read = await readStep();
        await ledger.setGlobalKill(kill('operator'));
        await expect(ledger.claimCall(call(), at(0), holder(), read.versions)).rejects.toThrow(changed);
        await expect(ledger.claimCall(call(), at(0), undefined, read.versions)).rejects.toThrow(changed);
        expect(await ledger.getCall('r1', 3, 1)).toBeUndefined();
        expect(await ledger.getEffect(holder().key)).toBeUndefined();
        // Read again, the kill is there to decide on, and a claim on that read holds.
        const again = await readStep();
        expect(again.globalKill).toEqual(kill('operator'));
        expect(await ledger.claimCall(call(), at(0), undefined, again.versions)).toMatchObject({ claimed: true });
      });

      it('claims nothing once the kill of all runs was lifted after the read, nor once the run was killed or stopped', async () => {
        await started();
        await ledger.setGlobalKill(kill('ops'));
        const killedAll = await readStep();
        await ledger.setGlobalKill(undefined);
        await expect(ledger.claimCall(call(), at(0), undefined, killedAll.versions)).rejects.toThrow(changed);
        const read = await readStep();
        await ledger.killRun('r1', kill('operator'));
        await expect(ledger.claimCall(call(), at(0), holder(), read.versions)).rejects.toThrow(changed);
        const killed = await readStep();
        await ledger.finishRun('r1', { status: 'stopped', stopReason: 'stopped by alice' }, at(1));
        await expect(ledger.claimCall(call(), at(0), holder(), killed.versions)).rejects.toThrow(changed);
        expect(await ledger.getCall('r1', 3, 1)).toBeUndefined();
        expect(await ledger.getEffect(holder().key)).toBeUndefined();
      });

      it('answers an effect another run completed elsewhere (a business key done before) with its record, and writes nothing', async () => {
        await started();
        // Another run, on another Lambda where the driver has one: this engine has no memory of the effect item.
        const elsewhere = under.another ? await under.another() : ledger;
        await elsewhere.claimCall(call({ runId: 'r2' }), at(0), holder({ runId: 'r2' }));
        await elsewhere.completeCall({ runId: 'r2', turn: 3, call: 1, outcome: { outcome: 'ok', result: '{"id":"re_1"}', latencyMs: 1 }, now: at(1), effect: { key: holder().key } });
        const read = await readStep();
        expect(await ledger.claimCall(call(), at(2), holder(), read.versions)).toMatchObject({ claimed: false, effect: { status: 'completed', runId: 'r2', result: '{"id":"re_1"}' } });
        expect(await ledger.getCall('r1', 3, 1)).toBeUndefined();
      });

      it('never claims a call claimed elsewhere since the read while its lease is live: refused (its caller reads again), or answered the claim there', async () => {
        await started();
        const read = await readStep();
        // Another Lambda on the same store where the driver has one (the engine's own memory of the call is then the read's).
        await (under.another ? await under.another() : ledger).claimCall(call(), at(0));
        const outcome = await ledger.claimCall(call(), at(10), undefined, read.versions).catch((error: unknown) => error);
        if (outcome instanceof Error) expect(outcome.message).toMatch(changed);
        else expect(outcome).toMatchObject({ claimed: false, existing: { attempts: 1 } });
        expect(await ledger.getCall('r1', 3, 1)).toMatchObject({ attempts: 1 });
      });
    });

    describe('completing and releasing a tool call', () => {
      it('completes an in-flight call with its outcome', async () => {
        await ledger.claimCall(call(), at(0));
        const completed = await ledger.completeCall({ runId: 'r1', turn: 3, call: 1, outcome: { outcome: 'error', result: '{"error":"declined"}', latencyMs: 12 }, now: at(2) });
        expect(completed).toEqual({
          ...call(),
          status: 'completed',
          attempts: 1,
          outcome: 'error',
          result: '{"error":"declined"}',
          latencyMs: 12,
          recordedAt: at(2).toISOString(),
        });
        expect(await ledger.getCall('r1', 3, 1)).toEqual(completed);
      });

      it('completes only an in-flight call, once', async () => {
        await ledger.claimCall(call(), at(0));
        await ledger.completeCall({ runId: 'r1', turn: 3, call: 1, outcome: { outcome: 'ok', result: '1', latencyMs: 1 }, now: at(1) });
        await expect(ledger.completeCall({ runId: 'r1', turn: 3, call: 1, outcome: { outcome: 'ok', result: '2', latencyMs: 1 }, now: at(2) })).rejects.toThrow(/conditional/i);
        expect((await ledger.getCall('r1', 3, 1))!.result).toBe('1');
      });

      it('does not complete a call that was never claimed', async () => {
        await expect(ledger.completeCall({ runId: 'r1', turn: 3, call: 1, outcome: { outcome: 'ok', result: '1', latencyMs: 1 }, now: at(1) })).rejects.toThrow(/conditional/i);
        expect(await ledger.getCall('r1', 3, 1)).toBeUndefined();
      });

      it('completes a call once when completions race', async () => {
        await ledger.claimCall(call(), at(0));
        const results = await Promise.allSettled(
          Array.from({ length: 10 }, (_, index) => ledger.completeCall({ runId: 'r1', turn: 3, call: 1, outcome: { outcome: 'ok', result: String(index), latencyMs: 1 }, now: at(1) })),
        );
        const fulfilled = results.filter((result) => result.status === 'fulfilled');
        expect(fulfilled).toHaveLength(1);
        expect((await ledger.getCall('r1', 3, 1))!.result).toBe((fulfilled[0] as PromiseFulfilledResult<ToolCallRecord>).value.result);
      });

      it('releases the lease of a cleanly failed call so the retry claims at once', async () => {
        await ledger.claimCall(call(), at(0));
        await ledger.releaseCall('r1', 3, 1, at(1));
        expect(await ledger.getCall('r1', 3, 1)).toMatchObject({ status: 'in_flight', leaseUntil: releasedAt(at(1)).toISOString() });
        // At the instant of the release (a standing clock): no wait.
        expect(await ledger.claimCall(call(), at(1))).toMatchObject({ claimed: true, record: { attempts: 2 } });
      });

      it('renews the lease for the attempt that holds the claim, and for no other', async () => {
        await ledger.claimCall(call(), at(0)); // attempt 1, lease to at(30)
        expect(await ledger.renewCall({ runId: 'r1', turn: 3, call: 1, attempts: 1, now: at(20), leaseUntil: at(60) })).toBe(true);
        expect(await ledger.getCall('r1', 3, 1)).toMatchObject({ status: 'in_flight', attempts: 1, leaseUntil: at(60).toISOString() });
        // Live: no other attempt claims it at at(45), past the first lease.
        expect(await ledger.claimCall(call(), at(45))).toMatchObject({ claimed: false });
        // Expired and taken over: the old holder's renewal is refused, the new one's lease stands.
        expect(await ledger.claimCall(call({ leaseUntil: at(120).toISOString() }), at(61))).toMatchObject({ claimed: true, record: { attempts: 2 } });
        expect(await ledger.renewCall({ runId: 'r1', turn: 3, call: 1, attempts: 1, now: at(62), leaseUntil: at(200) })).toBe(false);
        expect(await ledger.getCall('r1', 3, 1)).toMatchObject({ attempts: 2, leaseUntil: at(120).toISOString() });
      });

      it('does not revive a lease that ended: released, or run out', async () => {
        await ledger.claimCall(call(), at(0)); // lease to at(30)
        expect(await ledger.renewCall({ runId: 'r1', turn: 3, call: 1, attempts: 1, now: at(31), leaseUntil: at(60) })).toBe(false);
        await ledger.releaseCall('r1', 3, 1, at(5));
        expect(await ledger.renewCall({ runId: 'r1', turn: 3, call: 1, attempts: 1, now: at(5), leaseUntil: at(60) })).toBe(false);
        expect(await ledger.getCall('r1', 3, 1)).toMatchObject({ leaseUntil: releasedAt(at(5)).toISOString() });
      });

      it('does not renew a completed call, nor create one', async () => {
        await ledger.claimCall(call(), at(0));
        const completed = await ledger.completeCall({ runId: 'r1', turn: 3, call: 1, outcome: { outcome: 'ok', result: '1', latencyMs: 1 }, now: at(1) });
        expect(await ledger.renewCall({ runId: 'r1', turn: 3, call: 1, attempts: 1, now: at(2), leaseUntil: at(60) })).toBe(false);
        expect(await ledger.getCall('r1', 3, 1)).toEqual(completed);
        expect(await ledger.renewCall({ runId: 'r1', turn: 3, call: 2, attempts: 1, now: at(2), leaseUntil: at(60) })).toBe(false);
        expect(await ledger.getCall('r1', 3, 2)).toBeUndefined();
      });

      it('does not release a completed call, nor create one', async () => {
        await ledger.claimCall(call(), at(0));
        const completed = await ledger.completeCall({ runId: 'r1', turn: 3, call: 1, outcome: { outcome: 'ok', result: '1', latencyMs: 1 }, now: at(1) });
        await ledger.releaseCall('r1', 3, 1, at(2));
        expect(await ledger.getCall('r1', 3, 1)).toEqual(completed);
        await ledger.releaseCall('r1', 3, 2, at(2));
        expect(await ledger.getCall('r1', 3, 2)).toBeUndefined();
      });
    });
  });
}
