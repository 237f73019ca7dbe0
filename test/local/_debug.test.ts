import { it } from 'vitest';
import { postDecision, scheduledEvent, startHarness, waitFor } from '../engine/harness.js';

it('debug', async () => {
  const harness = await startHarness();
  const { stack } = harness;
  const decisions = (async () => {
    for (let index = 0; index < 2; index++) {
      const approval = await waitFor(() => harness.approvals[index]);
      console.log('approval', index, approval.approvalId);
      console.log(await postDecision(stack, approval.approvalId, { decision: 'reject', reason: 'card reported stolen' }));
    }
  })();
  const { executionArn } = stack.engine.startExecution({ name: 'dbg', input: { ...scheduledEvent, time: '2026-11-29T02:00:00Z' } });
  const t = setTimeout(() => {
    const h = stack.engine.getExecutionHistory(executionArn);
    console.log('STATUS', stack.engine.describeExecution(executionArn).status, h.length);
    for (const e of h.slice(-25)) console.log(e.id, e.type, JSON.stringify(e.stateEnteredEventDetails?.name ?? e.taskFailedEventDetails ?? e.stateExitedEventDetails?.name ?? e.taskSubmittedEventDetails?.output ?? '').slice(0, 300));
  }, 20000);
  await Promise.race([stack.engine.waitForExecution(executionArn), new Promise((r) => setTimeout(r, 21000))]);
  clearTimeout(t);
  console.log(stack.engine.describeExecution(executionArn));
  await decisions;
  await stack.close();
}, 60000);
