import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { crashInjector, HandoffRecorded } from '../../local/runtime/crash.js';
import { startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';
import { sfnStarter } from '../../lambdas/adapters/sfn.js';
import { executionChain } from '../../lambdas/guards/history.js';
import { createRecoverRun } from '../../lambdas/steps/recover-run.js';
import { waitFor, wakeOnEngineEvents, wakingLedger } from '../support/agent-harness.js';
import { counterAgent } from '../support/counter-agent.js';

const CALLS = 40;
const PER_TURN = 4;
const TURNS = CALLS / PER_TURN + 1;
const request = (runId: string) => ({ runId, input: { id: runId }, config: { historyEventsBeforeHandoff: 100 } });
const agent = counterAgent({ calls: CALLS, perTurn: PER_TURN });

const stacks: LocalStack[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const stack of stacks.splice(0)) await stack.close();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** The run once it is no longer running: checked after each event of the engine (no timer). */
async function finished(stack: LocalStack, runId: string) {
  const unwatch = wakeOnEngineEvents(stack.engine);
  try {
    return await waitFor(async () => {
      const run = await stack.ledger.getRun(runId);
      return run && run.status !== 'running' && run;
    });
  } finally {
    unwatch();
  }
}

/** Nothing lost, nothing twice: every turn and every call recorded once, counted once, in order. */
async function expectEveryStepOnce(stack: LocalStack, runId: string) {
  const run = (await stack.ledger.getRun(runId))!;
  expect(run.status).toBe('succeeded');
  expect(run.modelTurns).toBe(TURNS);
  expect(run.toolCalls).toBe(CALLS);
  expect(run.steps).toBe(TURNS + CALLS);
  const { turns, calls } = await stack.ledger.listConversation(runId);
  expect(turns.map((turn) => turn.turn)).toEqual(Array.from({ length: TURNS }, (_, i) => i + 1));
  expect(calls.map((call) => call.args['n'])).toEqual(Array.from({ length: CALLS }, (_, i) => i + 1));
  return run;
}

class Crash extends Error {
  override name = 'Runtime.ExitError';
}

describe('continue-as-new under crashes at the handoff', () => {
  it('a handoff step that dies after recording the successor: the execution fails, recovery follows the chain and starts the successor', async () => {
    const crash = crashInjector({ at: { point: HandoffRecorded as never, tool: undefined, nth: 1 } }, () => {
      throw new Crash('the Lambda process died after the handoff record');
    });
    const stack = await startLocalStack({ agent, retryDelayMs: 1, crash, decorateLedger: wakingLedger });
    stacks.push(stack);
    const { executionArn } = stack.engine.startExecution({ name: 'crash-a', input: request('crash-a') });
    const run = await finished(stack, 'crash-a');
    await expectEveryStepOnce(stack, 'crash-a');
    expect(stack.engine.describeExecution(executionArn)).toMatchObject({ status: 'FAILED', error: 'Runtime.ExitError' });
    const chain = executionChain(run);
    // The successor is the one the dead step named (started by recovery), not a recovery execution.
    expect(chain[1]).toMatchObject({ name: 'crash-a-c1', via: 'handoff' });
    expect(chain.every((link) => !link.name.includes('recovery'))).toBe(true);
    expect(chain.length).toBeGreaterThanOrEqual(3);
  }, 150_000);

  it('the process dies after the handoff record: a new engine on the same state directory resumes the run, nothing lost or repeated', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'savepoint-handoff-'));
    dirs.push(stateDir);
    let died!: () => void;
    const death = new Promise<void>((resolve) => (died = resolve));
    const crash = crashInjector({ at: { point: HandoffRecorded as never, tool: undefined, nth: 1 } }, () => {
      died();
      throw new Crash('killed');
    });
    // Nobody sees the dead process's executions end: no EventBridge recovery in this one.
    const first = await startLocalStack({ agent, stateDir, retryDelayMs: 1, crash, recovery: false });
    first.engine.startExecution({ name: 'crash-b', input: request('crash-b') });
    await death;
    await first.close();

    const second = await startLocalStack({ agent, stateDir, retryDelayMs: 1, decorateLedger: wakingLedger });
    stacks.push(second);
    const before = (await second.ledger.getRun('crash-b'))!;
    expect(before.executionArn.endsWith(':crash-b-c1')).toBe(true); // the record names a successor that never ran
    const [recovered] = await second.recoverOrphans();
    expect(recovered).toMatchObject({ runId: 'crash-b', action: 'recovered' });
    const run = await finished(second, 'crash-b');
    await expectEveryStepOnce(second, 'crash-b');
    expect(executionChain(run).map((link) => link.via).slice(0, 3)).toEqual(['start', 'handoff', 'resume']);
  }, 150_000);

  it('a predecessor that dies after its successor started: recovery starts the successor again by name, which starts nothing new', async () => {
    const stack = await startLocalStack({ agent, retryDelayMs: 1, decorateLedger: wakingLedger });
    stacks.push(stack);
    stack.engine.startExecution({ name: 'crash-c', input: request('crash-c') });
    await finished(stack, 'crash-c');
    const run = await expectEveryStepOnce(stack, 'crash-c');
    const executions = stack.engine.listExecutions().executions.length;
    // The FAILED status change of the first execution arrives late (as if it died after starting c1).
    const recover = createRecoverRun({ ledger: stack.ledger, starter: sfnStarter(stack.sfn, stack.stateMachineArn), clock: { now: () => new Date() } });
    await recover({ runId: 'crash-c', executionArn: run.executions[0]!, status: 'FAILED', endedAt: new Date().toISOString() });
    expect(stack.engine.listExecutions().executions.length).toBe(executions);
    await expectEveryStepOnce(stack, 'crash-c');
  }, 150_000);
});
