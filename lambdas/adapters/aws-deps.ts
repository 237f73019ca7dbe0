import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SFNClient } from '@aws-sdk/client-sfn';
import { z } from 'zod';
import { HttpMessagesClient } from '../agent/messages-client.js';
import type { AgentDefinition } from '../define.js';
import { CircuitBreaker } from '../guards/breaker.js';
import { DynamoDbLedger } from '../ledger/dynamodb-ledger.js';
import { createSteps, type AgentSteps, type HarnessDeps } from '../steps/create-steps.js';
import { systemClock } from '../steps/ports.js';
import { parseOrThrow } from '../shared/validation.js';
import { approvalApiHandler } from './approval-http.js';
import { stepHandler, type Telemetry } from './middleware.js';
import { powertools } from './powertools.js';
import { decisionMetrics } from './step-telemetry.js';
import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { sfnExecutions, sfnLookup, sfnStarter, sfnTaskCallbacks } from './sfn.js';

/**
 * The environment of the step functions on AWS, parsed once per cold start: a missing or malformed
 * variable fails the cold start with its name. infra/ sets the same variables.
 */
export const StepEnvironment = z.object({
  TABLE_NAME: z.string().min(3),
  MODEL_API_URL: z.url(),
  MODEL_API_KEY: z.string().min(1),
  CODE_VERSION: z.string().min(1),
  /** At least the Lambda timeout: a claim must outlive the invocation that took it. */
  TOOL_LEASE_MS: z.coerce.number().int().positive(),
  /** The agent state machine, for the recovery function to start executions of. */
  STATE_MACHINE_ARN: z.string().startsWith('arn:'),
  /** Recoveries in a row without progress before a run is given up. */
  MAX_RECOVERIES: z.coerce.number().int().positive().max(20),
});
export type StepEnvironment = z.infer<typeof StepEnvironment>;

/**
 * One set of clients per container, shared by every invocation, each built on first use: a
 * function reads only the variables of the clients its step uses.
 */
export function awsDeps(
  env: NodeJS.ProcessEnv = process.env,
  observe: { traced?: <T>(client: T) => T; telemetry?: Telemetry } = {},
): HarnessDeps {
  const traced = observe.traced ?? (<T>(client: T) => client);
  const config = parseOrThrow(StepEnvironment.partial(), env, 'Lambda environment');
  const required = <K extends keyof StepEnvironment>(name: K): StepEnvironment[K] => {
    const value = config[name];
    if (value === undefined) throw new Error(`invalid Lambda environment: ${name}: required`);
    return value as StepEnvironment[K];
  };
  const once = <T>(make: () => T): (() => T) => {
    let made: { value: T } | undefined;
    return () => (made ??= { value: make() }).value;
  };
  const sfn = once(() => traced(new SFNClient({})));
  const ledger = once(() => new DynamoDbLedger(traced(new DynamoDBClient({})), required('TABLE_NAME')));
  const breaker = once(() => new CircuitBreaker(ledger(), systemClock));
  const model = once(() => new HttpMessagesClient({ baseUrl: required('MODEL_API_URL'), apiKey: required('MODEL_API_KEY') }));
  return {
    get ledger() {
      return ledger();
    },
    get breaker() {
      return breaker();
    },
    get model() {
      return model();
    },
    get callbacks() {
      return sfnTaskCallbacks(sfn());
    },
    get executions() {
      return sfnExecutions(sfn());
    },
    get lookup() {
      return sfnLookup(sfn());
    },
    get starter() {
      return sfnStarter(sfn(), required('STATE_MACHINE_ARN'));
    },
    get codeVersion() {
      return required('CODE_VERSION');
    },
    get leaseMs() {
      return required('TOOL_LEASE_MS');
    },
    get recoveryPolicy() {
      return { maxWithoutProgress: required('MAX_RECOVERIES') };
    },
    clock: systemClock,
    agentEnv: env,
    // Ids and deadline only: the summary and details describe the tool's arguments.
    notify: ({ approvalId, runId, turn, call, toolName, decideBy }) => {
      const line = { approvalId, runId, turn, call, tool: toolName, decideBy };
      if (observe.telemetry) observe.telemetry.info('approval requested', line);
      else console.log(JSON.stringify({ level: 'INFO', message: 'approval requested', ...line }));
    },
  };
}

/** The Lambda handlers of an agent's functions (lambdas/handlers/ pick theirs by step). */
export function lambdaHandlers(agent: AgentDefinition, env: NodeJS.ProcessEnv = process.env) {
  const { telemetry, tracing, traced } = powertools(agent.name);
  const deps = awsDeps(env, { traced, telemetry });
  const steps: AgentSteps = createSteps(agent, deps);
  // Decisions made through the API count as ApprovalsDecided.
  const decisions: middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> = {
    after: (request) => {
      telemetry.addMetrics(decisionMetrics(request.event.httpMethod, request.response?.statusCode));
      telemetry.flush();
    },
  };
  return {
    step: (name: keyof AgentSteps) => stepHandler(steps[name], undefined, { step: name, telemetry, middlewares: [tracing] }),
    approvalApi: () =>
      approvalApiHandler({ ledger: deps.ledger, callbacks: deps.callbacks, clock: deps.clock, agentName: agent.name }, [tracing, decisions as middy.MiddlewareObj]),
  };
}
