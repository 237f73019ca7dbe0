import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, type ToolContext } from '../../lambdas/define.js';
import type { ToolCallRecord } from '../../lambdas/records/ledger-records.js';
import { meteredTools, recordedTools, referee } from '../../local/replay/answers.js';
import type { Recording } from '../../local/replay/recording.js';

/**
 * Replay's `live.tools` counts calls that reach a tool's own code (issue 35 item 4: it was a
 * constant 0). The replay builds its recorded answers over the metered tools: a call the recording
 * answers never reaches them; a call that does — a tool not answered from the recording — counts.
 */
describe("replay's live tool calls", () => {
  let sent = 0;
  const pay = defineTool({
    name: 'pay',
    description: 'pays',
    input: z.object({ cents: z.number() }),
    effect: 'write',
    execute: async (args) => {
      sent += 1;
      return { paid: args.cents };
    },
  });
  const agent = defineAgent({ name: 'payer', model: 'sim:savepoint-sim-1', system: 's', input: z.object({}), prompt: () => 'p', tools: [pay] });
  const recorded: ToolCallRecord = {
    kind: 'tool', runId: 'r1', turn: 1, call: 1, toolCallId: 't1', name: 'pay', args: { cents: 5 }, effect: 'write', idempotencyKey: 'r1:1:t1',
    status: 'completed', leaseUntil: '2026-12-01T00:00:00.000Z', attempts: 1, outcome: 'ok', result: '{"paid":5}',
  };
  const recording = { run: { runId: 'r1' }, turns: [], calls: [recorded], approvals: [] } as unknown as Recording;
  const context = (call: number) => ({ runId: 'r1', input: {}, config: {}, turn: 1, call, idempotencyKey: `r1:1:t${call}`, deps: undefined }) as unknown as ToolContext<any, any>;

  it('counts nothing for a call answered from the recording: the tool is not run', async () => {
    sent = 0;
    const metered = meteredTools(agent);
    const replaying = recordedTools(metered.agent, recording, referee(), () => false);
    expect(await replaying.tools[0]!.execute({ cents: 5 }, context(1))).toEqual({ paid: 5 });
    expect([replaying.toolCalls(), metered.live(), sent]).toEqual([1, 0, 0]);
  });

  it('counts a call that reaches the tool for real, naming the tool', async () => {
    sent = 0;
    const metered = meteredTools(agent);
    // What a replay would do with a tool it did not answer from the recording: run its own code.
    expect(await metered.agent.tools[0]!.execute({ cents: 7 }, context(2))).toEqual({ paid: 7 });
    expect([metered.live(), metered.first(), sent]).toEqual([1, 'pay', 1]);
  });

  it('refuses a call the recording does not hold (a divergence), running nothing', async () => {
    sent = 0;
    const judge = referee();
    const metered = meteredTools(agent);
    const replaying = recordedTools(metered.agent, recording, judge, () => false);
    await expect(replaying.tools[0]!.execute({ cents: 5 }, context(2))).rejects.toThrow(/replay diverged at turn 1/);
    expect(judge.divergence).toMatchObject({ turn: 1, call: 2, what: 'tool call', recorded: 'no such call' });
    expect([metered.live(), sent]).toEqual([0, 0]);
  });
});
