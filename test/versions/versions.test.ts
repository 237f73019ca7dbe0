import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { MessageRequest } from '../../lambdas/records/messages.js';
import type { ApprovalRecord, RunRecord } from '../../lambdas/records/ledger-records.js';
import { codeFingerprint } from '../../lambdas/runs/versions.js';
import { createClient } from '../../client/ledger-client.js';
import { sfnStarter } from '../../lambdas/adapters/sfn.js';
import type { HistoryEvent } from '../../local/engine/local-engine.js';
import { startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';
import { postDecision } from '../support/agent-harness.js';
import { orderOf, versionedAgent } from './versioned-agent.js';

/**
 * Deploys that do not rewrite live runs (issue 14), on the synthesized state machine in the local
 * engine: runs parked on an approval while v2 is "deployed" finish on v1; new runs start on the
 * newest version; a migration is refused unless the new version declares the run's compatible,
 * and when allowed it moves the run, recorded, and the run continues on the new code. Each test
 * sets up the scene it needs on a stack of its own (runs parked on v1, then the deploys), so none
 * depends on another's runs or order.
 */
describe('versions: a deploy does not rewrite live runs', () => {
  let payments: string[];
  let requests: MessageRequest[];
  let v1: ReturnType<typeof versionedAgent>;
  let v2: ReturnType<typeof versionedAgent>;
  let v3: ReturnType<typeof versionedAgent>;
  const fingerprint = (agent: typeof v1) => codeFingerprint(agent, 'dev')(agent.model);
  let waiting: Map<string, (approval: ApprovalRecord) => void>;
  let approvals: Map<string, Promise<ApprovalRecord>>;
  const approvalOf = (runId: string) => {
    let found = approvals.get(runId);
    if (!found) approvals.set(runId, (found = new Promise((resolve) => waiting.set(runId, resolve))));
    return found;
  };
  let stack: LocalStack;
  let events: (HistoryEvent & { executionArn: string })[];

  beforeEach(async () => {
    payments = [];
    requests = [];
    v1 = versionedAgent({ version: '1', payments, onRequest: (request) => requests.push(request) });
    v2 = versionedAgent({ version: '2', payments });
    v3 = versionedAgent({ version: '3', compatibleWith: ['1'], payments });
    waiting = new Map();
    approvals = new Map();
    stack = await startLocalStack({ agent: v1, retryDelayMs: 1, onApproval: (approval) => (approvalOf(approval.runId), waiting.get(approval.runId)?.(approval)) });
    events = [];
    stack.engine.on((event) => events.push(event));
  });
  afterEach(() => stack?.close());

  /** Resolves at the first history event of `executionArn` that matches (already recorded or to come). */
  const eventOf = (executionArn: string, matches: (event: HistoryEvent) => boolean) =>
    new Promise<HistoryEvent>((resolve) => {
      const seen = events.find((event) => event.executionArn === executionArn && matches(event));
      if (seen) return resolve(seen);
      const stop = stack.engine.on((event) => {
        if (event.executionArn === executionArn && matches(event)) {
          stop();
          resolve(event);
        }
      });
    });
  const waitsForApproval = (executionArn: string) => eventOf(executionArn, (event) => event.type === 'TaskSubmitted');
  const start = (runId: string, name: string) => stack.engine.startExecution({ name, input: { runId, input: { id: runId } } }).executionArn;
  const run = async (runId: string) => (await stack.ledger.getRun(runId))!;
  const conversation = (runId: string) => stack.ledger.listConversation(runId);
  const client = () => createClient({ ledger: stack.ledger, sfn: stack.sfn, stateMachineArn: stack.stateMachineArn, pause: () => new Promise((resolve) => setImmediate(resolve)) });

  /** Starts a run and waits until it waits on its approval. */
  const parked = async (runId: string, name: string) => {
    const executionArn = start(runId, name);
    await Promise.all([approvalOf(runId), waitsForApproval(executionArn)]);
    return executionArn;
  };
  /** The scene most tests start from: run-a and run-c parked on v1, then v2 deployed. */
  const parkedOnV1ThenV2 = async () => {
    const [a, c] = await Promise.all([parked('run-a', 'a-1'), parked('run-c', 'c-1')]);
    expect(stack.deploy(v2)).toBe(2);
    return { a, c };
  };
  const approve = async (runId: string) => expect((await postDecision(stack, (await approvalOf(runId)).approvalId, { decision: 'approve' })).status).toBe(200);

  it('runs started on v1 wait on their approvals on version 1', async () => {
    const [a, c] = await Promise.all([parked('run-a', 'a-1'), parked('run-c', 'c-1')]);
    expect(stack.engine.versionOf(a).number).toBe(1);
    expect(stack.engine.versionOf(c).number).toBe(1);
    expect((await run('run-a')).fingerprint).toBe(fingerprint(v1));
    expect((await run('run-a')).agentVersion).toBe('1');
  });

  it('after v2 is deployed, a new run starts on v2 and is bound to its fingerprint', async () => {
    const { a } = await parkedOnV1ThenV2();
    expect(fingerprint(v2)).not.toBe(fingerprint(v1));
    const b = await parked('run-b', 'b-1');
    expect(stack.engine.versionOf(b).number).toBe(2);
    expect(stack.engine.versionOf(a).number).toBe(1);
    expect(await run('run-b')).toMatchObject({ fingerprint: fingerprint(v2), agentVersion: '2' });
  });

  it('refuses to migrate a run to a version that does not declare it compatible, naming why, and changes nothing', async () => {
    const { c } = await parkedOnV1ThenV2();
    const before = await run('run-c');
    await expect(client().migrate('run-c', { to: '2', by: 'ops@example.com' })).rejects.toThrow(
      'run run-c cannot be migrated to version 2: version 2 does not declare version 1 compatible (it declares no compatibleWith); the run finishes on version 1',
    );
    const after = await run('run-c');
    expect(after).toEqual(before);
    expect(stack.engine.describeExecution(c).status).toBe('RUNNING');
  });

  it('the v1 run, approved after the deploy, finishes on v1: every turn recorded by v1 code, no v2 tool offered', async () => {
    const { a } = await parkedOnV1ThenV2();
    await approve('run-a');
    const ended = await stack.engine.waitForExecution(a);
    expect(ended.status).toBe('SUCCEEDED');
    const finished = await run('run-a');
    expect(finished).toMatchObject({ status: 'succeeded', fingerprint: fingerprint(v1), agentVersion: '1' });
    const { turns, calls } = await conversation('run-a');
    expect(turns.map((turn) => turn.fingerprint)).toEqual([fingerprint(v1), fingerprint(v1), fingerprint(v1)]);
    expect(calls.map((call) => call.name)).toEqual(['lookup', 'pay']);
    const sent = requests.filter((request) => orderOf(request) === 'run-a');
    expect(sent).toHaveLength(3);
    for (const request of sent) expect(request.tools?.map((tool) => tool.name)).toEqual(['lookup', 'pay']);
    expect(stack.engine.versionOf(a).number).toBe(1);
  });

  it('the v2 run finishes on v2, with its new tool', async () => {
    await parkedOnV1ThenV2();
    const b = await parked('run-b', 'b-1');
    await approve('run-b');
    expect((await stack.engine.waitForExecution(b)).status).toBe('SUCCEEDED');
    const { turns, calls } = await conversation('run-b');
    expect(new Set(turns.map((turn) => turn.fingerprint))).toEqual(new Set([fingerprint(v2)]));
    expect(calls.map((call) => call.name)).toEqual(['lookup', 'pay', 'notify']);
  });

  it('a run continued by recovery or a handoff starts on the version its execution runs, not the newest', async () => {
    const { a } = await parkedOnV1ThenV2();
    await approve('run-a');
    expect((await stack.engine.waitForExecution(a)).status).toBe('SUCCEEDED');
    const starter = sfnStarter(stack.sfn, stack.stateMachineArn);
    const continued = await starter.start('a-continued', JSON.stringify({ runId: 'run-a', input: { id: 'run-a' } }), { sameVersionAs: a });
    expect(stack.engine.versionOf(continued.executionArn).number).toBe(1);
    const fresh = await starter.start('fresh-1', JSON.stringify({ runId: 'run-fresh', input: { id: 'run-fresh' } }));
    expect(stack.engine.versionOf(fresh.executionArn).number).toBe(2);
    await stack.engine.stopExecution(fresh.executionArn);
    expect((await stack.engine.waitForExecution(continued.executionArn)).status).toBe('SUCCEEDED'); // the run is finished: NothingToDo
  });

  it('a resume through the client starts on the run’s own version; forced, on the newest', async () => {
    // run-c waits on v1 while v2 is the newest: a resume joins it on version 1 (a duplicate of a live run: nothing to do).
    const { c } = await parkedOnV1ThenV2();
    const resumed = await client().start({ runId: 'run-c', input: { id: 'run-c' } });
    expect(stack.engine.versionOf(resumed.executionArn).number).toBe(1);
    expect((await stack.engine.waitForExecution(resumed.executionArn)).status).toBe('SUCCEEDED');
    const forced = await client().start({ runId: 'run-c', input: { id: 'run-c' }, force: true });
    expect(stack.engine.versionOf(forced.executionArn).number).toBe(2);
    expect((await stack.engine.waitForExecution(forced.executionArn)).status).toBe('SUCCEEDED');
    expect((await run('run-c')).executionArn).toBe(c);
  });

  it('migrates a run to a version that declares it compatible: recorded, and the run continues on the new code', async () => {
    const { c } = await parkedOnV1ThenV2();
    expect(stack.deploy(v3)).toBe(3);
    const view = await client().migrate('run-c', { to: '3', by: 'ops@example.com' });
    const migrated = await run('run-c');
    expect(migrated).toMatchObject({ status: 'running', fingerprint: fingerprint(v3), agentVersion: '3' });
    expect(migrated.migrations).toEqual([
      {
        by: 'ops@example.com',
        at: expect.any(String),
        from: { version: '1', fingerprint: fingerprint(v1), executionArn: c },
        to: { version: '3', fingerprint: fingerprint(v3), executionArn: migrated.executionArn },
      },
    ]);
    expect(view.report.version.migrations).toEqual(migrated.migrations);
    expect(view.report.chain.map((link) => link.via)).toEqual(['start', 'migrate']);
    // The superseded execution was stopped, and its stop killed nothing.
    expect((await stack.engine.waitForExecution(c)).status).toBe('ABORTED');
    expect(stack.engine.versionOf(migrated.executionArn).number).toBe(3);

    // The new execution asks for the same approval again (same id, a fresh task token); approved, the run ends on v3.
    await waitsForApproval(migrated.executionArn);
    const approval = await approvalOf('run-c');
    expect((await postDecision(stack, approval.approvalId, { decision: 'approve' })).status).toBe(200);
    expect((await stack.engine.waitForExecution(migrated.executionArn)).status).toBe('SUCCEEDED');
    const { turns, calls } = await conversation('run-c');
    expect(turns.map((turn) => turn.fingerprint)).toEqual([fingerprint(v1), fingerprint(v1), fingerprint(v3), fingerprint(v3)]);
    expect(calls.map((call) => call.name)).toEqual(['lookup', 'pay', 'notify']);
    expect((await run('run-c')).status).toBe('succeeded');
    // Every payment once.
    expect(payments.filter((key) => key.startsWith('run-c:'))).toHaveLength(1);
  });
});
