import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import * as protocol from '../../lambdas/ledger/protocol.js';
import type { ToolCallRecord, TurnRecord } from '../../lambdas/records/ledger-records.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { cutResult, resolveResults, storeResult } from '../../lambdas/ledger/blobs.js';
import { verifyRun } from '../../lambdas/ledger/seal.js';
import { copiedSteps, copyPrefix, editedPrefix, forkChanges, forkEffects, forkPrefix, forkRunRecord, hazardReport, writeVerdict } from '../../lambdas/runs/fork.js';
import { requestShape, shapeChanges } from '../../lambdas/runs/request-shape.js';
import { call, run, turn } from '../contract/fixtures.js';

// Forks and replay as pure rules: the lineage transition on the parent (ledger protocol), the
// prefix a fork copies, what a fork's write is against the parent's, and the request shape replay names changes by.

const usesTurn = (number: number, uses: number): TurnRecord => ({
  ...turn(number),
  stopReason: 'tool_use',
  content: Array.from({ length: uses }, (_, index) => ({ type: 'tool_use' as const, id: `t${number}_${index}`, name: 'issue_refund', input: {} })),
});
const done = (number: number, index: number, overrides: Partial<ToolCallRecord> = {}): ToolCallRecord => ({ ...call({ turn: number, call: index, status: 'completed', outcome: 'ok', result: '{"ok":true}' }), ...overrides });

describe('recordFork (ledger protocol)', () => {
  it('appends the fork to the parent once, and answers false without a parent', () => {
    const step = protocol.recordFork({ record: run('p0'), meta: {} }, { runId: 'f1', turn: 2 });
    if (!('write' in step)) throw new Error('expected a write');
    expect(step.write.record).toMatchObject({ forks: [{ runId: 'f1', turn: 2 }] });
    expect(protocol.recordFork({ record: step.write.record as never, meta: {} }, { runId: 'f1', turn: 2 })).toEqual({ keep: true });
    expect(protocol.recordFork(undefined, { runId: 'f1', turn: 2 })).toEqual({ keep: false });
  });
});

describe('forkPrefix', () => {
  const parent = { run: run('p0', { status: 'succeeded' }), turns: [usesTurn(1, 1), usesTurn(2, 2), usesTurn(3, 0)], calls: [done(1, 1), done(2, 1), done(2, 2)] };

  it('refuses a parent still running, naming the field: its writes after the fork read them would be sent again', () => {
    expect(() => forkPrefix({ ...parent, run: run('p0') }, 2)).toThrow(/^fork\.from: run p0 is still running; fork a run that has finished or stopped/);
    expect(() => forkPrefix({ ...parent, run: run('p0') }, 2, { from: 'runId', at: '--at', results: '--result', result: () => '' })).toThrow(/^runId: run p0 is still running/);
    for (const status of ['succeeded', 'failed', 'stopped', 'killed'] as const) expect(forkPrefix({ ...parent, run: run('p0', { status }) }, 2).turns).toHaveLength(1);
  });

  it('copies the turns before the fork point with their calls', () => {
    const prefix = forkPrefix(parent, 3);
    expect(prefix.turns.map((t) => t.turn)).toEqual([1, 2]);
    expect(prefix.calls.map((c) => `${c.turn}:${c.call}`)).toEqual(['1:1', '2:1', '2:2']);
    expect(copiedSteps(prefix).map((step) => step.key)).toEqual(['turn:1', 'turn:2', 'call:1:1', 'call:2:1', 'call:2:2']);
  });

  it('fails when the fork point is past the turn after the last, naming the range', () => {
    expect(() => forkPrefix(parent, 5)).toThrow(/fork\.at: run p0 has 3 turns; fork at 1 to 4/);
  });

  it('fails when a copied turn has a call without a result', () => {
    expect(() => forkPrefix({ ...parent, calls: [done(1, 1), done(2, 1)] }, 3)).toThrow(/turn 2 of run p0 has 1 tool calls without a result; fork at 2 or earlier/);
  });

  it('gives a fresh budget by adding what the copied steps spent to each limit', () => {
    const prefix = forkPrefix(parent, 3);
    const parentRun = run('p0');
    const forked = forkRunRecord(run('f1'), parentRun, { from: 'p0', at: 3, effects: 'reuse', freshBudget: true }, prefix);
    expect(forked.config.maxSteps).toBe(parentRun.config.maxSteps + 5);
    expect(forked.forkedFrom).toEqual({ runId: 'p0', turn: 3, effects: 'reuse' });
    expect(forkRunRecord(run('f1'), parentRun, { from: 'p0', at: 3, effects: 'dry' }, prefix).config).toEqual(parentRun.config);
  });
});

describe('editedPrefix', () => {
  const prefix = forkPrefix({ run: run('p0', { status: 'succeeded' }), turns: [usesTurn(1, 1), usesTurn(2, 2)], calls: [done(1, 1), done(2, 1, { outcome: 'error', result: '{"error":"x"}' }), done(2, 2)] }, 3);

  it("answers each named call of the last copied turn with the edited result, as an ok outcome", () => {
    const edited = editedPrefix(prefix, { at: 3, results: [{ call: 1, result: { status: 'refunded' } }] });
    expect(edited.calls.map((c) => `${c.turn}:${c.call} ${c.outcome} ${c.result}`)).toEqual(['1:1 ok {"ok":true}', '2:1 ok {"status":"refunded"}', '2:2 ok {"ok":true}']);
    expect(editedPrefix(prefix, { at: 3 })).toBe(prefix);
  });

  it('fails when the call is not one the last copied turn made, naming the field', () => {
    expect(() => editedPrefix(prefix, { at: 3, results: [{ call: 2, result: 1 }, { call: 3, result: 1 }] })).toThrow(/^fork\.results\[1\]\.call: turn 2 of the parent made 2 tool calls, not a call 3$/);
  });

  it('fails at turn 1, which copies no result', () => {
    expect(() => editedPrefix({ turns: [], calls: [] }, { at: 1, results: [{ call: 1, result: 1 }] })).toThrow(/^fork\.results: a fork at turn 1 copies no tool result/);
  });

  it("names the edits in the fork's lineage, with another input and model", () => {
    const forked = forkRunRecord({ ...run('f1'), input: { date: '2026-12-01' }, model: 'anthropic:claude-haiku-4-5' }, run('p0'), { from: 'p0', at: 3, effects: 'dry', results: [{ call: 2, result: 1 }] }, prefix);
    expect(forked.forkedFrom).toEqual({ runId: 'p0', turn: 3, effects: 'dry', edited: { input: true, model: true, results: [{ turn: 2, call: 2 }] } });
  });
});

describe('forkChanges and the hazard report', () => {
  const read = { name: 'a', description: 'A', effect: 'read' as const, input: z.object({}), execute: async () => 1 };
  const write = { ...read, name: 'pay', effect: 'write' as const };
  const parent = { ...run('p0'), agentVersion: '1', requestShape: requestShape({ system: 's', tools: [read] }) };

  it('names a new write tool as one whose calls are all sent live, and the other changes', () => {
    const changes = forkChanges(parent, { agent: { system: 's', tools: [read, write], version: '2' }, input: { other: true }, model: 'anthropic:claude-haiku-4-5', fork: { at: 3, results: [{ call: 1, result: { x: 1 } }] } });
    expect(changes).toEqual([
      'the code: version 1 → 2',
      'tool pay is new: a write the parent could not make (each call of it is sent live, unless the fork is dry)',
      `the input: ${JSON.stringify(parent.input)} → {"other":true}`,
      `the model: ${parent.model} → anthropic:claude-haiku-4-5 (the copied turns stay the parent's)`,
      'the result of turn 2 call 1, as the model sees it: {"x":1}',
    ]);
    expect(hazardReport([], { from: 'p0', at: 3, effects: 'dry' }, changes.slice(0, 1))).toEqual(['dry fork of p0 at turn 3: no write is sent (each is recorded as what it would have done)', 'what the fork changes against the parent:', '  the code: version 1 → 2']);
  });

  it('names nothing for a fork on the same code, input and model', () => {
    expect(forkChanges(parent, { agent: { system: 's', tools: [read], version: '1' }, input: parent.input, fork: { at: 2 } })).toEqual([]);
  });
});

describe('copyPrefix', () => {
  it("stores a result the parent kept by reference again under the fork, so the fork reads it; every record verifies", async () => {
    const ledger = EmbeddedLedger.open();
    const big = JSON.stringify({ rows: 'x'.repeat(70_000) });
    const parentRun = run('p0', { status: 'succeeded' });
    await ledger.createRun(parentRun);
    const turn1 = { ...usesTurn(1, 1), runId: 'p0' };
    await ledger.recordTurn(turn1);
    await ledger.recordCall({ ...done(1, 1), runId: 'p0', result: await storeResult(ledger, 'p0', big) } as ToolCallRecord & { status: 'completed' }, new Date());
    const { turns, calls } = await ledger.listConversation('p0');
    const prefix = forkPrefix({ run: parentRun, turns, calls }, 2);
    const fork = forkRunRecord(run('f1'), parentRun, { from: 'p0', at: 2, effects: 'reuse' }, prefix);
    await ledger.createRun(fork);
    await copyPrefix(ledger, fork, prefix, new Date());
    const copied = await resolveResults(ledger, (await ledger.listConversation('f1')).calls);
    expect(copied.map((c) => c.result)).toEqual([big]);
    for (const runId of ['p0', 'f1']) expect((await verifyRun(ledger, runId)).problems).toEqual([]);
  });

  /** A parent p0 whose call 1/1 recorded `result` (its blobs as `blobs` left them), and a fork f1 of it at turn 2. */
  async function forkOf(result: (ledger: EmbeddedLedger) => Promise<string>) {
    const ledger = EmbeddedLedger.open();
    const parentRun = run('p0', { status: 'succeeded' });
    await ledger.createRun(parentRun);
    await ledger.recordTurn({ ...usesTurn(1, 1), runId: 'p0' });
    await ledger.recordCall({ ...done(1, 1), runId: 'p0', result: await result(ledger) } as ToolCallRecord & { status: 'completed' }, new Date());
    const { turns, calls } = await ledger.listConversation('p0');
    const prefix = forkPrefix({ run: parentRun, turns, calls }, 2);
    const fork = forkRunRecord(run('f1'), parentRun, { from: 'p0', at: 2, effects: 'reuse' }, prefix);
    await ledger.createRun(fork);
    return { ledger, copy: () => copyPrefix(ledger, fork, prefix, new Date()) };
  }
  const whole = JSON.stringify({ rows: 'x'.repeat(5_000) });
  const cutOf = (ledger: EmbeddedLedger, runId: string) => cutResult(whole, 500, (text) => storeResult(ledger, runId, text, 0));

  it("gives a cut whose whole the parent never held (an earlier version's pointer) its head and no pointer, and the fork goes on", async () => {
    // A later run of a business key as 0.21.0 recorded it: the cut names the holder's chunks (`h0`'s), not p0's.
    const { ledger, copy } = await forkOf((ledger) => cutOf(ledger, 'h0'));
    await copy();
    const [copied] = (await ledger.listConversation('f1')).calls;
    expect(JSON.parse(copied!.result!)).toEqual({ truncated: true, bytes: whole.length, head: expect.any(String), stored: null, message: expect.stringMatching(/no longer kept/) });
  });

  it("refuses a parent whose own result stored by reference is gone from its blobs: that is damage, named", async () => {
    const { copy } = await forkOf(async (ledger) => storeResult(ledger, 'elsewhere', whole, 0));
    await expect(copy()).rejects.toThrow(/^ledger integrity: run p0, stored tool result [0-9a-f]{64} \(5011 bytes\) fails verification: no chunk found$/);
  });
});

describe('forkEffects answers from the parent’s record', () => {
  it('a write the parent made whose result is stored by reference: the result itself, read back', async () => {
    const ledger = EmbeddedLedger.open();
    const big = { rows: 'x'.repeat(70_000) };
    await ledger.createRun(run('p0', { status: 'succeeded' }));
    await ledger.recordCall({ ...done(1, 1, { name: 'pay', args: {} }), runId: 'p0', result: await storeResult(ledger, 'p0', JSON.stringify(big)) } as ToolCallRecord & { status: 'completed' }, new Date());
    await ledger.createRun(run('f1', { forkedFrom: { runId: 'p0', turn: 1, effects: 'reuse' } }));
    let sent = 0;
    const pay = { name: 'pay', description: 'pays', effect: 'write', input: z.object({}), execute: async () => ++sent };
    const [tool] = (forkEffects({ tools: [pay] } as never, ledger) as { tools: unknown }).tools as [typeof pay & { execute: (args: unknown, context: unknown) => Promise<unknown> }];
    expect(await tool.execute({}, { runId: 'f1', turn: 1, call: 1 })).toEqual(big);
    expect(sent).toBe(0);
  });
});

describe('writeVerdict', () => {
  const paid = { ...done(2, 1, { name: 'issue_refund', args: { refundRequestId: 'rr_1', amountCents: 500 } }), businessKey: 'rr_1' };

  it('reuses the parent\'s write with the same tool and arguments', () => {
    expect(writeVerdict({ name: 'issue_refund' }, { amountCents: 500, refundRequestId: 'rr_1' }, undefined, [paid])).toEqual({ kind: 'reuse', parent: paid });
  });

  it('calls a write with other arguments new when the tool has no business key', () => {
    expect(writeVerdict({ name: 'issue_refund' }, { refundRequestId: 'rr_1', amountCents: 900 }, undefined, [paid])).toEqual({ kind: 'new' });
  });

  it('calls the same business key with other arguments a hazard', () => {
    const verdict = writeVerdict({ name: 'issue_refund' }, { refundRequestId: 'rr_1', amountCents: 900 }, 'rr_1', [paid]);
    expect(verdict).toMatchObject({ kind: 'hazard', reason: expect.stringMatching(/same business key rr_1 and other arguments/) });
  });

  it('never reuses a parent\'s write that failed', () => {
    expect(writeVerdict({ name: 'issue_refund' }, paid.args, 'rr_1', [{ ...paid, outcome: 'error' }])).toEqual({ kind: 'new' });
  });
});

describe('request shape', () => {
  const a = { name: 'a', description: 'A', effect: 'read' as const, input: z.object({}), execute: async () => 1 };
  const b = { ...a, name: 'b' };
  it('names a changed system prompt, and a new tool', () => {
    expect(shapeChanges(requestShape({ system: 'one', tools: [a] }), requestShape({ system: 'two', tools: [a, b] }))).toEqual(['the system prompt changed', 'tool b is new']);
    expect(shapeChanges(requestShape({ system: 'one', tools: [a] }), requestShape({ system: 'one', tools: [a] }))).toEqual([]);
  });
});

describe('forkEffects keeps the lineages of recent runs only (issue 26, item 9)', () => {
  it("reads a run's lineage once while it runs, and forgets it once many newer runs have taken its place", async () => {
    const ledger = EmbeddedLedger.open();
    let reads = 0;
    const counted = { getRun: (runId: string) => (reads++, ledger.getRun(runId)), listConversation: (runId: string) => ledger.listConversation(runId), getBlob: ledger.getBlob.bind(ledger), putBlob: ledger.putBlob.bind(ledger) };
    const lookup = { name: 'lookup', description: 'reads', effect: 'read', input: z.object({}), execute: async () => 'looked up' };
    const [tool] = (forkEffects({ tools: [lookup] } as never, counted) as { tools: unknown }).tools as [typeof lookup & { execute: (args: unknown, context: unknown) => Promise<unknown> }];
    const runs = 1_000;
    for (let i = 0; i < runs; i++) {
      await ledger.createRun(run(`r${i}`));
      for (let step = 0; step < 3; step++) expect(await tool.execute({}, { runId: `r${i}` })).toBe('looked up');
    }
    expect(reads).toBe(runs); // once per run, not once per step
    await tool.execute({}, { runId: `r${runs - 1}` });
    expect(reads).toBe(runs); // the newest run's is still kept
    await tool.execute({}, { runId: 'r0' });
    expect(reads).toBe(runs + 1); // the first run's was forgotten (a bound, not one entry per run ever seen): read again
  });
});
