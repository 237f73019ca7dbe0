/**
 * Issue 34, "a shared control plane per stack": one API serves every agent of a stack. Two agents
 * of one deployed template (the refund reconciler as `agent-0` and `agent-1`, bench/deploy.ts
 * synthesizeFleet, made once a run: test/support/fleet-once.ts), each on the twin's engine with its own state machine, over one ledger, served
 * through the stack's one API over loopback (local/runtime/stack-api.ts: the runs routes, the
 * approval callback and the run event stream of the stack's shared functions). The twin's IAM is
 * on, one for the whole template (local/aws/iam/index.ts `twinIam` `shared`): every function acts
 * as its own role of that template — each agent's step functions as theirs, the API's as the stack's
 * shared ones — and API Gateway invokes those only as their Lambda permissions allow.
 */
import { SFNClient, StartExecutionCommand, StopExecutionCommand, DescribeExecutionCommand } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { fleetOnce } from '../support/fleet-once.js';
import { followEvents } from '../../client/events.js';
import { Steps } from '../../lambdas/shared/steps.js';
import { INTEGRATION_PERMISSION_REFUSAL } from '../../local/aws/iam/api-gateway.js';
import type { Caller } from '../../local/aws/iam/index.js';
import type { AuthorizationRequest } from '../../local/aws/iam/policy.js';
import { ledgerAs } from '../../local/aws/iam/dynamodb.js';
import { localAwsConfig } from '../../local/services/aws-config.js';
import { startStackApi } from '../../local/runtime/stack-api.js';
import type { CfnTemplateJson } from '../../local/template/asl.js';
import { sampleDay, startHarness, type Harness } from '../support/refund-harness.js';

let template: CfnTemplateJson;
let a: Harness;
let b: Harness;
let api: Awaited<ReturnType<typeof startStackApi>>;

beforeAll(async () => {
  const fleet = await fleetOnce(2, false);
  template = fleet.parent as CfnTemplateJson;
  const agent = (index: number) => ({ ...refundReconciler, name: `agent-${index}` }) as never;
  // One template, both agents, one IAM: the second agent's stack shares the first's ledger and IAM.
  a = await startHarness({ recovery: false, day: sampleDay, template, agent: agent(0) });
  b = await startHarness({ recovery: false, day: sampleDay, template, agent: agent(1), sharedLedger: a.stack.storage, sharedIam: a.stack.iam! });
  api = await startStackApi([a.stack, b.stack]);
}, 120_000);
afterAll(async () => {
  await api?.close();
  await b?.stack.close();
  await a?.stack.close();
});

/** A request to the one API over loopback, as this machine's user (the runs routes under /v1/runs, the approvals under /v1/approvals). */
const call = async (base: string, path: string, init: { method?: string; body?: unknown } = {}): Promise<{ status: number; body: any }> => {
  const response = await fetch(`${base}${path}`, { method: init.method ?? 'GET', ...(init.body !== undefined && { headers: { 'content-type': 'application/json' }, body: JSON.stringify(init.body) }) });
  return { status: response.status, body: await response.json() };
};
const start = (body: unknown) => call(api.runsUrl, '', { method: 'POST', body });
const TERMINAL = ['completed', 'failed', 'cancelled'];
const executions = () => [...a.stack.engine.listExecutions().executions, ...b.stack.engine.listExecutions().executions];

/** Every IAM decision while `body` runs: who asked what, and what was refused. */
async function decisionsDuring<T>(body: () => Promise<T>): Promise<{ result: T; asked: { role: string; request: AuthorizationRequest }[]; denied: string[] }> {
  const asked: { role: string; request: AuthorizationRequest }[] = [];
  const denied: string[] = [];
  const stop = a.stack.iam!.authorizer.onDecision((caller: Caller, request, decision) => {
    const role = 'role' in caller ? caller.role : 'administrator';
    asked.push({ role, request });
    if (decision !== 'Allowed') denied.push(`${role} ${request.action} ${request.resource}`);
  });
  try {
    return { result: await body(), asked, denied };
  } finally {
    stop();
  }
}

/** Reads the run through the one API until it has ended, deciding each approval it waits on through the one API. */
async function runToEnd(runId: string, agent: string): Promise<Record<string, unknown>> {
  // A long-poll only after a read that found the run working and waiting on nobody: it answers when
  // the run moves on from what it read first, so one sent as the run waits on a new approval would
  // idle to its 20 s (as the client's wait does: client/connect.ts).
  for (let wait = ''; ; ) {
    const run = await call(api.runsUrl, `/${runId}${wait}`);
    // StartRun has not recorded it yet: let the engine run (a turn of the event loop, no timer) and read it again.
    if (run.status === 404) {
      await new Promise((resolve) => setImmediate(resolve));
      continue;
    }
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    if (TERMINAL.includes(run.body.lifecycle)) return run.body;
    // The approvals it waits on.
    const approvals = run.body.approvals as { approvalId: string; agent: string }[];
    for (const approval of approvals) {
      expect(approval.agent).toBe(agent);
      const decided = await call(api.url, `/${approval.approvalId}`, { method: 'POST', body: { decision: 'approve' } });
      expect(decided.status, JSON.stringify(decided.body)).toBe(200);
    }
    wait = approvals.length === 0 ? '?wait=20' : '';
  }
}

describe("a stack's one API, two agents, the twin's IAM on", () => {
  it('refuses a start that names no agent, an unknown one, or an input the named agent refuses: nothing starts', async () => {
    expect(await start({ input: { date: sampleDay.date }, runId: 'nobody' })).toMatchObject({ status: 400, body: { message: 'agent: this API runs agent-0, agent-1: name one' } });
    expect(await start({ agent: 'agent-9', input: { date: sampleDay.date }, runId: 'nobody' })).toMatchObject({ status: 400, body: { message: expect.stringMatching(/^agent: no agent agent-9 here/) } });
    const refused = await start({ agent: 'agent-1', input: { date: 'yesterday' }, runId: 'refused' });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/input of agent agent-1/);
    expect(await a.stack.ledger.getRun('nobody')).toBeUndefined();
    expect(await a.stack.ledger.getRun('refused')).toBeUndefined();
    expect(executions().filter((execution) => /:(nobody|refused)-/.test(execution.executionArn))).toEqual([]);
  });

  it("starts each agent's run on its own state machine, serves each run, approval and event stream by its agent, and lists them together: every call as its own role, none refused", async () => {
    const { asked, denied } = await decisionsDuring(async () => {
      const started = [await start({ agent: 'agent-0', input: { date: sampleDay.date }, runId: 'zero' }), await start({ agent: 'agent-1', input: { date: sampleDay.date }, runId: 'one' })];
      expect(started.map(({ status }) => status)).toEqual([202, 202]);
      expect(started[0]!.body).toMatchObject({ agent: 'agent-0', executionArn: expect.stringMatching(/:execution:Fleet-agent-0:zero-/) });
      expect(started[1]!.body).toMatchObject({ agent: 'agent-1', executionArn: expect.stringMatching(/:execution:Fleet-agent-1:one-/) });
      expect(await runToEnd('zero', 'agent-0')).toMatchObject({ agent: 'agent-0', lifecycle: 'completed' });
      expect(await runToEnd('one', 'agent-1')).toMatchObject({ agent: 'agent-1', lifecycle: 'completed' });
      // Each ended run's events, streamed by the stack's one RunEvents function: from the start to the end.
      for (const runId of ['zero', 'one']) {
        const events = [];
        for await (const event of followEvents({ base: api.runsUrl.replace(/\/runs$/, '') }, runId)) events.push(event);
        expect(events[0]?.id, runId).toBe('a.run');
        expect(events.at(-1)?.id, runId).toBe('z.run');
      }
    });
    expect(denied).toEqual([]);
    // Each agent's records are touched by its own functions' roles and the stack's shared ones, never by the other agent's.
    for (const [own, other] of [
      ['agent-0', 'Agent1'],
      ['agent-1', 'Agent0'],
    ] as const) {
      const touching = asked.filter(({ request }) => JSON.stringify(request.context?.['dynamodb:LeadingKeys'] ?? []).includes(`#${own}:`));
      expect(touching.length, own).toBeGreaterThan(0);
      expect(touching.filter(({ role }) => role.startsWith(other))).toEqual([]);
    }
    const roles = new Set(asked.map(({ role }) => role));
    for (const prefix of ['Agent0CallToolFunction', 'Agent1CallToolFunction', 'Agent0AgentStateMachineRole', 'Agent1AgentStateMachineRole', 'ControlPlaneStackApiRunsApiFunction', 'ControlPlaneStackApiApprovalCallbackFunction', 'ControlPlaneStackApiRunEventsFunction']) {
      expect([...roles].some((role) => role.startsWith(prefix)), prefix).toBe(true);
    }
    const listed = await call(api.runsUrl, '');
    expect(listed.body.runs.map((run: { runId: string; agent: string }) => `${run.agent}:${run.runId}`).filter((run: string) => /:(zero|one)$/.test(run)).sort()).toEqual(['agent-0:zero', 'agent-1:one']);
    expect((await call(api.runsUrl, '?agent=agent-1')).body.runs.map((run: { runId: string }) => run.runId)).toContain('one');
    expect((await call(api.runsUrl, '?agent=agent-1')).body.runs.map((run: { runId: string }) => run.runId)).not.toContain('zero');
    // A run id is one run of one agent: another agent's start of it is refused.
    expect(await start({ agent: 'agent-0', input: { date: sampleDay.date }, runId: 'one' })).toMatchObject({ status: 400, body: { message: 'runId: run one is a run of agent agent-1, not agent-0' } });
    expect(executions().filter((execution) => /:(zero|one)-/.test(execution.executionArn))).toHaveLength(2);
  }, 180_000);

  it("cancels agent 1's run through the one API, as the stack's runs function", async () => {
    const { result: cancelled, asked, denied } = await decisionsDuring(async () => {
      expect((await start({ agent: 'agent-1', input: { date: sampleDay.date }, runId: 'cancelled' })).status).toBe(202);
      // At once: a kill recorded, the run stops at its next step (or, waiting on a person, its execution is stopped: StopExecution).
      for (;;) {
        const answer = await call(api.runsUrl, '/cancelled/cancel', { method: 'POST', body: { reason: 'not today' } });
        // StartRun has not recorded it yet: let the engine run (a turn of the event loop, no timer) and ask again.
        if (answer.status === 404) {
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        expect(answer.status, JSON.stringify(answer.body)).toBe(202);
        break;
      }
      for (;;) {
        const run = (await call(api.runsUrl, '/cancelled?wait=20')).body;
        if (TERMINAL.includes(run.lifecycle)) return run;
      }
    });
    expect(denied).toEqual([]);
    expect(cancelled).toMatchObject({ agent: 'agent-1', lifecycle: 'cancelled' });
    expect(asked.filter(({ request }) => request.action === 'states:StopExecution').every(({ role }) => role.startsWith('ControlPlaneStackApiRunsApiFunction'))).toBe(true);
    expect(b.stack.engine.listExecutions().executions.find((execution) => execution.executionArn.includes(':cancelled-'))?.status).not.toBe('RUNNING');
  }, 120_000);
});

describe('least privilege between the two agents of the running stack', () => {
  const machine = (agent: number) => `arn:aws:states:us-east-1:000000000000:stateMachine:Fleet-agent-${agent}`;
  /** A Step Functions client signing as `harness`'s `step` function's role, to `to`'s endpoint (where the other agent's state machine is). */
  const clientAs = (harness: Harness, step: string, to: Harness) => new SFNClient({ ...localAwsConfig, credentials: harness.stack.iam!.credentialsOf(step)!, endpoint: to.stack.endpoints.sfn });
  const refusal = (promise: Promise<unknown>) => promise.then(() => undefined, (error: Error) => error);

  it("refuses agent 0's step function roles agent 1's ledger records, reads and writes (dynamodb:LeadingKeys), and lets agent 1's own read them", async () => {
    const effect = 'agent-1:issue_refund:rf_1';
    for (const step of [Steps.CallTool, Steps.Finalize, Steps.BudgetCheck]) {
      const asAgent0 = ledgerAs(step, a.stack.ledger, a.stack.iam);
      for (const attempt of [() => asAgent0.getEffect(effect), () => asAgent0.getAggregate('agent-1:issue_refund:cust_1')]) {
        const refused = await refusal(attempt());
        expect(refused?.name, step).toBe('AccessDeniedException');
        expect(refused?.message).toMatch(new RegExp(`assumed-role/Agent0\\w+/Agent0\\w+ is not authorized to perform: dynamodb:GetItem on resource: arn:aws:dynamodb:us-east-1:000000000000:table/\\w+ because`));
      }
    }
    const write = await refusal(ledgerAs(Steps.CallTool, a.stack.ledger, a.stack.iam).reserveAggregate({ key: 'agent-1:issue_refund:cust_1', holder: 'r1:1:1', amount: 5 }, new Date()));
    expect(write?.name).toBe('AccessDeniedException');
    expect(write?.message).toMatch(/assumed-role\/Agent0CallToolFunction\w+\/Agent0CallToolFunction\w+ is not authorized to perform: dynamodb:(GetItem|PutItem)/);
    // The control: agent 1's own CallTool reads them (nothing there yet), as agent 0's reads its own.
    expect(await ledgerAs(Steps.CallTool, b.stack.ledger, b.stack.iam).getEffect(effect)).toBeUndefined();
    expect(await ledgerAs(Steps.CallTool, a.stack.ledger, a.stack.iam).getEffect('agent-0:issue_refund:rf_1')).toBeUndefined();
  });

  it("refuses agent 0's Handoff role a start or a stop of agent 1's executions on agent 1's endpoint; the stack's runs function may start both", async () => {
    const handoff = clientAs(a, Steps.Handoff, b);
    try {
      // Authorized before the input is read (refused with an input Step Functions would refuse anyway: nothing can start).
      const start = await refusal(handoff.send(new StartExecutionCommand({ stateMachineArn: `${machine(1)}:live`, name: 'intruder', input: '{' })));
      expect(start?.name).toBe('AccessDeniedException');
      expect(start?.message).toMatch(/assumed-role\/Agent0HandoffFunction\w+\/Agent0HandoffFunction\w+ is not authorized to perform: states:StartExecution on resource: arn:aws:states:us-east-1:000000000000:stateMachine:Fleet-agent-1/);
      const stop = await refusal(handoff.send(new StopExecutionCommand({ executionArn: 'arn:aws:states:us-east-1:000000000000:execution:Fleet-agent-1:intruder' })));
      expect(stop?.name).toBe('AccessDeniedException');
      expect(stop?.message).toMatch(/not authorized to perform: states:StopExecution on resource: arn:aws:states:us-east-1:000000000000:execution:Fleet-agent-1:intruder/);
    } finally {
      handoff.destroy();
    }
    // The control: on its own endpoint the same role is authorized (and then told there is no such execution).
    const own = clientAs(a, Steps.Handoff, a);
    try {
      expect((await refusal(own.send(new DescribeExecutionCommand({ executionArn: 'arn:aws:states:us-east-1:000000000000:execution:Fleet-agent-0:absent' }))))?.name).toBe('ExecutionDoesNotExist');
    } finally {
      own.destroy();
    }
    // The stack's runs function: authorized on both agents' machines and executions (then refused the input, so nothing starts; told there is no such execution).
    for (const [to, agent] of [
      [a, 0],
      [b, 1],
    ] as const) {
      const runs = clientAs(a, Steps.RunsApi, to);
      try {
        expect((await refusal(runs.send(new StartExecutionCommand({ stateMachineArn: `${machine(agent)}:live`, name: 'shared', input: '{' }))))?.name).toBe('InvalidExecutionInput');
        expect((await refusal(runs.send(new StopExecutionCommand({ executionArn: `arn:aws:states:us-east-1:000000000000:execution:Fleet-agent-${agent}:absent` }))))?.name).toBe('ExecutionDoesNotExist');
      } finally {
        runs.destroy();
      }
    }
    expect(executions().filter((execution) => /:(intruder|shared)-?/.test(execution.executionArn))).toEqual([]);
  });
});

describe("API Gateway invokes the stack's functions as their Lambda permissions allow", () => {
  it('answers 500 Internal server error, the function never invoked, when the runs function has no permission for API Gateway; the deployed template invokes it', async () => {
    const permissions = Object.entries(template.Resources!).filter(([, resource]) => resource.Type === 'AWS::Lambda::Permission' && resource.Properties?.['Principal'] === 'apigateway.amazonaws.com');
    expect(permissions.length).toBeGreaterThan(0);
    const runsFunction = Object.keys(template.Resources!).find((id) => id.startsWith('ControlPlaneStackApiRunsApiFunction') && template.Resources![id]!.Type === 'AWS::Lambda::Function')!;
    const withoutRunsPermission: CfnTemplateJson = {
      ...template,
      Resources: Object.fromEntries(Object.entries(template.Resources!).filter(([, resource]) => !(resource.Type === 'AWS::Lambda::Permission' && JSON.stringify(resource.Properties?.['FunctionName']).includes(runsFunction)))),
    };
    const broken = await startStackApi([a.stack, b.stack], { template: withoutRunsPermission });
    try {
      const refused = await call(broken.runsUrl, '', { method: 'POST', body: { agent: 'agent-0', input: { date: sampleDay.date }, runId: 'no-permission' } });
      expect(refused).toEqual({ status: INTEGRATION_PERMISSION_REFUSAL.status, body: { message: 'Internal server error' } });
      expect(await a.stack.ledger.getRun('no-permission')).toBeUndefined();
      // The approval callback keeps its permission: its routes are invoked.
      expect((await call(broken.url, '')).status).toBe(200);
    } finally {
      await broken.close();
    }
    // The deployed template: the same request reaches the runs function (its refusal of an unknown agent is its own).
    expect(await call(api.runsUrl, '', { method: 'POST', body: { agent: 'agent-9', input: { date: sampleDay.date }, runId: 'no-permission' } })).toMatchObject({ status: 400, body: { message: expect.stringMatching(/^agent: no agent agent-9 here/) } });
  });
});
