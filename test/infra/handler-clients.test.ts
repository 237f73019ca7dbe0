import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import refundReconciler from '../../agents/refund-reconciler/agent.js';
import { lambdaStep } from '../../lambdas/adapters/aws-deps.js';
import { stepFunctionsOnFirstCall } from '../../lambdas/adapters/clients-on-first-call.js';
import { wireStartRun } from '../../lambdas/wiring/steps/start-run.js';
import { exampleTemplate } from './example-template.js';
import { fakeAwslambda, invocationOutput } from '../support/fake-awslambda.js';

/**
 * Each handler file passes only the AWS clients its step uses (lambdas/adapters/aws-clients.ts),
 * so its bundle holds no other SDK. Left out, a client fails only on AWS, on the function's first
 * invocation: here every function of the example stack is built from its own handler file with
 * the environment the template gives it, and its step is invoked. Every AWS endpoint is a closed
 * port, so a step that gets as far as a call fails with a connection error; what must never come
 * back is "its handler passes no … client".
 */
vi.mock('@savepoint/agent-entry', async () => ({ default: (await import('../../agents/refund-reconciler/agent.js')).default }));
// The stack's API functions bundle every agent of the stack (infra/stack-api.ts): here its one.
vi.mock('@savepoint/agents-entry', async () => ({ default: [(await import('../../agents/refund-reconciler/agent.js')).default] }));

const MISSING = /handler passes no/;
// The run events function streams (lambdas/handlers/run-events.ts): Lambda's runtime gives it `awslambda`.
Object.assign(globalThis, { awslambda: fakeAwslambda });
afterAll(() => void delete (globalThis as { awslambda?: unknown }).awslambda);
const saved = { ...process.env };
afterEach(() => {
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  Object.assign(process.env, saved);
});

/** A JSON variable with references in it (the stack API's AGENT_SETTINGS: an approvers parameter), each reference a word. */
const joined = (value: unknown) => ((value as { 'Fn::Join': [string, unknown[]] })['Fn::Join'][1]).map((part) => (typeof part === 'string' ? part : 'x')).join('');

/** The function's variables, each CloudFormation reference replaced by a well-formed value; the SDK pointed at a closed port. */
function environmentOf(variables: Record<string, unknown>): Record<string, string> {
  const fake = (name: string) => (/ARN(_PREFIX)?$/.test(name) ? 'arn:aws:x:us-east-1:123456789012:x' : name === 'APPROVAL_PAGE_URL' ? 'https://example.com/decide' : `${name.toLowerCase()}-1`);
  return {
    ...Object.fromEntries(Object.entries(variables).map(([name, value]) => [name, typeof value === 'string' ? value : name === 'AGENT_SETTINGS' ? joined(value) : fake(name)])),
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'AKIAEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'example',
    AWS_ENDPOINT_URL: 'http://127.0.0.1:1',
    AWS_MAX_ATTEMPTS: '1',
  };
}

const functions = Object.values(exampleTemplate().toJSON().Resources as Record<string, { Type: string; Properties: { Environment?: { Variables?: Record<string, unknown> } } }>)
  .filter((resource) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.Environment?.Variables?.['SAVEPOINT_STEP'])
  .map((resource) => resource.Properties.Environment!.Variables!);

const context = { awsRequestId: 'request-1', functionName: 'fn', invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:fn', memoryLimitInMB: '512', getRemainingTimeInMillis: () => 30_000 };

describe('each Lambda handler passes the AWS clients its step uses', () => {
  it('covers every step function of the example stack', () => {
    expect(functions.map((variables) => variables['SAVEPOINT_STEP']).sort()).toEqual(
      ['approval-callback', 'budget-check', 'call-model', 'call-tool', 'compact', 'execution-stopped', 'expire-approvals', 'finalize', 'handoff', 'prune-versions', 'recover-run', 'request-approval', 'run-events', 'runs-api', 'start-run', 'sweep'].sort(),
    );
  });

  it.each(functions.map((variables) => [String(variables['SAVEPOINT_STEP']), variables] as const))('%s', async (step, variables) => {
    Object.assign(process.env, environmentOf(variables));
    // Building the handler builds the approval API's dependencies (the callback) …
    const { handler } = (await import(`../../lambdas/handlers/${step}.ts`)) as { handler: (event: unknown, context: unknown) => Promise<unknown> };
    // … and a step's are read on its first invocation, before the event is parsed.
    const event =
      step === 'approval-callback'
        ? { httpMethod: 'GET', path: '/approvals', resource: '/approvals', headers: {}, queryStringParameters: null, pathParameters: null, body: null, requestContext: { identity: { userArn: 'arn:aws:iam::123456789012:user/ops' } } }
        : step === 'runs-api'
          ? { httpMethod: 'POST', path: '/runs', resource: '/runs', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ input: { date: '2026-11-28' } }), requestContext: { identity: { userArn: 'arn:aws:iam::123456789012:user/ops' } } }
          : {};
    // A streaming handler takes the response stream between the event and the context.
    const invoke = step === 'run-events' ? () => (handler as unknown as (e: unknown, s: unknown, c: unknown) => Promise<unknown>)({ httpMethod: 'GET', pathParameters: { runId: 'r1' }, headers: {} }, invocationOutput().stream, context) : () => handler(event, context);
    const outcome = await invoke().then(
      () => 'answered',
      (error: Error) => error.message,
    );
    expect(outcome).not.toMatch(MISSING);
  });

  // The example stack has no batches: the item function of an agent with them is one of the agent's
  // functions (StartRun's environment) that signs starters as the stack's runs function does, on the agent's alias.
  it('batch-item', async () => {
    const startRun = functions.find((variables) => variables['SAVEPOINT_STEP'] === 'start-run')!;
    const runsApi = functions.find((variables) => variables['SAVEPOINT_STEP'] === 'runs-api')!;
    Object.assign(process.env, environmentOf({ ...startRun, STARTER_KEY_ID: runsApi['STARTER_KEY_ID'], STATE_MACHINE_ARN: 'arn:aws:states:us-east-1:123456789012:stateMachine:Savepoint-refund-reconciler:live', SAVEPOINT_STEP: 'batch-item' }));
    const { handler } = (await import('../../lambdas/handlers/batch-item.js')) as { handler: (event: unknown, context: unknown) => Promise<unknown> };
    const event = { action: 'start', batchId: 'b1', agent: 'refund-reconciler', runId: 'b1-0', input: { date: '2026-11-28' }, caller: { id: 'ops', via: 'iam' } };
    const outcome = await handler(event, context).then(
      () => 'answered',
      (error: Error) => error.message,
    );
    expect(outcome).not.toMatch(MISSING);
  });

  it('fails a step whose handler did not pass a client it uses, naming it (the control)', async () => {
    // StartRun reads Step Functions (is another execution of the run live?); BudgetCheck no longer does (issue 34).
    const startRun = functions.find((variables) => variables['SAVEPOINT_STEP'] === 'start-run')!;
    const env = environmentOf(startRun);
    const handler = lambdaStep(refundReconciler, 'start-run', wireStartRun, { env, clients: {} });
    await expect(handler({}, context as never)).rejects.toThrow(/handler passes no Step Functions client/);
  });

  it("reaches Step Functions through CallTool's client loaded on first call (its SDK in a chunk of its own)", async () => {
    const callTool = functions.find((variables) => variables['SAVEPOINT_STEP'] === 'call-tool')!;
    Object.assign(process.env, environmentOf(callTool));
    const sfn = stepFunctionsOnFirstCall.stepFunctions((client) => client);
    // The closed port refuses the connection: the SDK was loaded, the client made, the request sent.
    await expect(sfn.lookup.describe('arn:aws:states:us-east-1:123456789012:execution:sm:run-1')).rejects.toThrow(/ECONNREFUSED/);
  });
});
