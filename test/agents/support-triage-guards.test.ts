import { afterEach, describe, expect, it } from 'vitest';
import { supportTriage } from '../../agents/support-triage/agent.dev.js';
import { loadReport } from '../../lambdas/runs/report.js';
import { sampleInput, startTriage, waitFor, type TriageHarness } from '../support/triage-harness.js';

/**
 * The guards that matter for an agent that sends mail: a budget, and a person's kill, stop it
 * before its next step — and nothing is sent after the stop.
 */

let harness: TriageHarness | undefined;
afterEach(async () => {
  await harness?.stack.close();
  harness = undefined;
});

describe('support triage under its guards', () => {
  it('stops on the step budget, naming it, with nothing in flight and no reply sent after the stop', async () => {
    harness = await startTriage({ decide: 'approve' });
    const finished = await harness.run({ runId: 'budget', input: sampleInput, config: { maxSteps: 12 } });

    expect(finished.status).toBe('SUCCEEDED');
    const output = JSON.parse(finished.output!) as { status: string; reason: string };
    expect(output).toMatchObject({ status: 'stopped', reason: 'budget exceeded: steps 12 / 12' });
    const report = (await loadReport(harness.stack.ledger, 'budget', new Date(), supportTriage))!;
    expect(report).toMatchObject({ status: 'stopped', steps: 12, inFlight: 0 });
    expect(report.guardEvents).toEqual([expect.objectContaining({ guard: 'steps', action: 'stopped' })]);
    // Stopped partway through the inbox: the provider sent exactly the replies the ledger recorded.
    const replied = Number(report.summary!['replied']);
    expect(replied).toBeLessThan(8);
    expect(harness.stack.world.server.sent()).toHaveLength(replied);
  });

  it('stops a killed run before its next step, saying who killed it; no reply goes out after the kill', async () => {
    let killedAt: { steps: number; sent: number } | undefined;
    const flag = { by: 'alice', at: '2026-11-28T15:00:00.000Z', reason: 'wrong inbox' };
    // The kill lands while get_ticket of the fifth ticket is at the helpdesk: a known point of the run.
    harness = await startTriage({
      decide: 'approve',
      onRequest: async (route) => {
        if (route !== 'GET /v1/tickets/tkt_005' || killedAt) return;
        const { stack } = harness!;
        await stack.ledger.killRun('to-kill', flag);
        // The report's steps: the run item's lag by the open turn's calls (lambdas/ledger/open-turn.ts), which the report counts.
        killedAt = { steps: (await loadReport(stack.ledger, 'to-kill', new Date(), supportTriage))!.steps, sent: stack.world.server.sent().length };
      },
    });
    const finished = await harness.run({ runId: 'to-kill', input: sampleInput });

    expect(JSON.parse(finished.output!)).toMatchObject({ status: 'killed', reason: `killed by alice at ${flag.at}: wrong inbox` });
    const run = (await harness.stack.ledger.getRun('to-kill'))!;
    expect(run).toMatchObject({ status: 'killed', killed: flag });
    expect(killedAt).toBeDefined();
    // Only the step already running when the flag was set (that get_ticket) completes.
    expect(run.steps - killedAt!.steps).toBeLessThanOrEqual(1);
    expect(harness.stack.world.server.sent()).toHaveLength(killedAt!.sent);
    expect((await loadReport(harness.stack.ledger, 'to-kill', new Date(), supportTriage))!.inFlight).toBe(0);
  });

  it('treats StopExecution as a kill, recorded on the run', async () => {
    let stopping: Promise<unknown> | undefined;
    let executionArn = '';
    // An operator stops the execution while get_ticket of the third ticket is at the helpdesk.
    harness = await startTriage({
      decide: 'approve',
      onRequest: (route) => {
        if (route === 'GET /v1/tickets/tkt_003' && !stopping) {
          // Not awaited: the engine stops the execution while this request is still being answered.
          stopping = harness!.stack.engine.stopExecution(executionArn, { error: 'Operator.Stop', cause: 'paused for a policy review' });
        }
      },
    });
    const { stack } = harness;
    ({ executionArn } = stack.engine.startExecution({ name: 'stopped', input: { runId: 'stopped', input: sampleInput } }));
    const run = await waitFor(async () => {
      const current = await stack.ledger.getRun('stopped');
      return current?.status === 'killed' ? current : undefined;
    });
    await stopping;
    expect(run.killed).toMatchObject({ by: 'StopExecution', reason: 'Operator.Stop: paused for a policy review' });
    expect(stack.world.server.sent().map((mail) => mail.inReplyTo)).not.toContain('tkt_003');
  });
});
