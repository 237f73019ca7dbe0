/**
 * Who started a run (lambdas/runs/starter.ts): the runs API signs the caller it verified with the
 * request it starts; StartRun records `startedBy` only when that signature verifies. Whoever may
 * call StartExecution writes the whole input (issue 20 item 5, issue 26).
 */
import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { hmacDecisionMac } from '../../lambdas/approvals/decision-mac.js';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import { signStarter, verifiedStarter } from '../../lambdas/runs/starter.js';
import * as z from 'zod';
import { createStartRoute } from '../../lambdas/runs/start-route.js';
import { createStartRun } from '../../lambdas/steps/start-run.js';

const key = randomBytes(32);
const mac = hmacDecisionMac(async () => key);
const otherKey = hmacDecisionMac(async () => randomBytes(32));
const request = { runId: 'r1', input: { date: '2026-11-28' }, config: { maxSteps: 40 } };

describe('the starter of a run request', () => {
  it('verifies as signed, whatever the order of the fields', async () => {
    const signed = await signStarter(mac, request, 'alice');
    const reordered = { startedByMac: signed.startedByMac, config: signed.config, startedBy: 'alice', input: signed.input, runId: 'r1' };
    expect(await verifiedStarter(mac, reordered)).toBe('alice');
  });

  it.each([
    ['an unsigned startedBy', { ...request, startedBy: 'alice' }],
    ['a made-up MAC', { ...request, startedBy: 'alice', startedByMac: 'QUFBQQ==' }],
  ])('is not %s', async (_case, claimed) => {
    expect(await verifiedStarter(mac, claimed)).toBeUndefined();
  });

  it.each([
    ['another starter', (signed: Record<string, unknown>) => ({ ...signed, startedBy: 'mallory' })],
    ['another run id', (signed: Record<string, unknown>) => ({ ...signed, runId: 'r2' })],
    ['another input', (signed: Record<string, unknown>) => ({ ...signed, input: { date: '2026-11-29' } })],
    ['other settings', (signed: Record<string, unknown>) => ({ ...signed, config: { maxSteps: 4000 } })],
    ['a field added', (signed: Record<string, unknown>) => ({ ...signed, force: true })],
  ])('is not a signed one moved onto %s', async (_case, move) => {
    const signed = await signStarter(mac, request, 'alice');
    expect(await verifiedStarter(mac, move(signed))).toBeUndefined();
  });

  it('is not one signed with another key, nor any when StartRun has no key', async () => {
    expect(await verifiedStarter(mac, await signStarter(otherKey, request, 'alice'))).toBeUndefined();
    expect(await verifiedStarter(undefined, await signStarter(mac, request, 'alice'))).toBeUndefined();
  });
});

describe('StartRun and the runs API', () => {
  let ledger: EmbeddedLedger;
  const clock = { now: () => new Date('2026-11-29T02:00:00Z') };
  const startRun = () => {
    const start = createStartRun({ agent: refundReconciler, ledger, executions: { isRunning: async () => false, stop: async () => undefined }, clock, codeVersion: 'v1', starterMac: mac });
    return (event: unknown, executionArn = 'arn:aws:states:us-east-1:1:execution:m:e1') => start({ event, executionArn, definition: { hash: 'h' } });
  };
  const machine = 'arn:aws:states:us-east-1:000000000000:stateMachine:Savepoint-refund-reconciler';
  /** The runs API whose StartExecution hands the input straight to StartRun (what the engine does). */
  const route = (starts: { arn: string; name: string; input: unknown }[]) =>
    createStartRoute({
      agent: refundReconciler,
      starterMac: mac,
      runs: ledger,
      stateMachineArn: `${machine}:live`,
      clock,
      start: async (arn, name, input) => {
        starts.push({ arn, name, input: JSON.parse(input) });
        await startRun()(JSON.parse(input));
        return { executionArn: `${machine.replace(':stateMachine:', ':execution:')}:${name}` };
      },
    });

  beforeEach(() => {
    ledger = EmbeddedLedger.open();
  });
  afterEach(() => ledger.close());

  it('records the caller the runs API signed as the starter, on the alias unless a version is named', async () => {
    const starts: { arn: string; name: string; input: unknown }[] = [];
    expect(await route(starts)({ id: 'arn:aws:iam::000000000000:role/ops', via: 'iam' }, { input: { date: '2026-11-28' } })).toMatchObject({
      runId: 'refunds-2026-11-28',
      startedBy: 'arn:aws:iam::000000000000:role/ops',
    });
    expect((await ledger.getRun('refunds-2026-11-28'))!.startedBy).toBe('arn:aws:iam::000000000000:role/ops');
    expect(starts[0]).toMatchObject({ arn: `${machine}:live`, name: `refunds-2026-11-28-${clock.now().getTime().toString(36)}` });
    await route(starts)({ id: 'bob', via: 'cli' }, { runId: 'r2', input: { date: '2026-11-28' }, stateMachineArn: `${machine}:3`, executionName: 'r2-again' });
    expect(starts[1]).toMatchObject({ arn: `${machine}:3`, name: 'r2-again' });
  });

  it('sends only the settings the caller named, so the agent\'s own budgets stay the defaults of the rest', async () => {
    const starts: { arn: string; name: string; input: unknown }[] = [];
    await route(starts)({ id: 'bob', via: 'cli' }, { runId: 'r3', input: { date: '2026-11-28' }, config: { approvalTimeoutSeconds: 60 } });
    expect((starts[0]!.input as { config: unknown }).config).toEqual({ approvalTimeoutSeconds: 60 });
    expect((await ledger.getRun('r3'))!.config).toMatchObject({ approvalTimeoutSeconds: 60, maxSteps: refundReconciler.budgets?.maxSteps ?? 400 });
  });

  it('records no starter for a startedBy the input claims, and keeps the schedule\'s own', async () => {
    await startRun()({ ...request, startedBy: 'alice' });
    expect((await ledger.getRun('r1'))!.startedBy).toBeUndefined();
    await startRun()({ 'detail-type': 'Scheduled Event', source: 'aws.events', time: '2026-11-29T02:00:00Z', startedBy: 'alice' });
    // A scheduled event has no such field: it is the schedule's run, whatever else it carries.
    expect((await ledger.getRun('refunds-2026-11-28'))?.startedBy).toBe('schedule:aws.events');
  });

  it.each([
    [{ input: { date: '2026-11-28' }, startedBy: 'alice' }, /startedBy/],
    [{ input: { date: '2026-11-28' }, migrate: { to: '2', by: 'alice' } }, /migrate/],
    [{ input: { date: 'yesterday' } }, /input of agent refund-reconciler/],
    [{ input: { date: '2026-11-28' }, stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:another' }, /stateMachineArn: .* is not arn:aws:states:us-east-1:000000000000:stateMachine:Savepoint-refund-reconciler/],
    [{ input: { date: '2026-11-28' }, executionName: 'has spaces' }, /executionName/],
  ])('refuses %j before anything starts, naming the field', async (body, message) => {
    const starts: unknown[] = [];
    await expect(route(starts as never)({ id: 'bob', via: 'cli' }, body)).rejects.toThrow(message);
    expect(starts).toEqual([]);
  });
  it("refuses with a 413 a run whose record would not fit, its prompt quoting its input: nothing started", async () => {
    const starts: { arn: string; name: string; input: unknown }[] = [];
    const agent = { ...refundReconciler, input: z.object({ text: z.string() }).strict(), prompt: (input: unknown) => `Note: ${(input as { text: string }).text}` };
    const quoting = createStartRoute({ agent: agent as never, starterMac: mac, runs: ledger, stateMachineArn: machine, clock, start: async (arn, name, input) => (starts.push({ arn, name, input }), { executionArn: `${machine}:${name}` }) });
    await expect(quoting({ id: 'local:alice', via: 'cli' }, { runId: 'big', input: { text: 'x'.repeat(200 * 1024) } })).rejects.toThrow(
      expect.objectContaining({ name: 'RequestTooLarge', message: expect.stringMatching(/^input: the run's record would hold \d+ bytes/) }),
    );
    expect(starts).toEqual([]);
  });
});
