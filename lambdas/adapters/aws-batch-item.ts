import type { AgentDefinition } from '../define.js';
import { deploymentPrices } from '../models/prices.js';
import { createBatchItem } from '../runs/batch.js';
import { createRunsRoutes, type RunsApiDeps } from '../runs/runs-api.js';
import { parseOrThrow } from '../shared/validation.js';
import { Steps } from '../shared/steps.js';
import type { AwsClients } from './aws-clients.js';
import { given, lambdaFunction, StepEnvironment } from './aws-deps.js';

/**
 * StartItemRun and CheckItemRun of the stack's batches (lambdas/runs/batch.ts `createBatchItem`): a
 * run started through the runs API's own start path (its starter signed, on the agent's alias). A
 * module of its own, so that no step's bundle holds the runs API.
 */
export function batchItemHandler(agent: AgentDefinition, options: { env?: NodeJS.ProcessEnv; clients?: AwsClients } = {}) {
  const { env, deps, traced, handler } = lambdaFunction(agent, options);
  const starterMac = deps.approvals?.starterMac;
  if (!starterMac) throw new Error('invalid Lambda environment: STARTER_KEY_ID: required');
  const sfn = given(options.clients?.stepFunctions, 'Step Functions client')(traced);
  const runs: RunsApiDeps = {
    agent,
    starterMac,
    runs: deps.ledger,
    ledger: deps.ledger,
    stop: (arn, error, cause) => sfn.executions.stop(arn, error, cause),
    ...(deps.children && { children: deps.children }),
    stateMachineArn: parseOrThrow(StepEnvironment().pick({ STATE_MACHINE_ARN: true }), env, 'Lambda environment').STATE_MACHINE_ARN,
    start: (arn, name, input) => sfn.starter(arn).start(name, input),
    clock: deps.clock,
    maxBudgets: deps.maxBudgets,
    prices: deploymentPrices(agent.prices, deps.prices),
    ...(deps.defaultModel && { defaultModel: deps.defaultModel }),
    ...(deps.approvals?.policy && { people: deps.approvals.policy }),
  };
  return handler(Steps.BatchItem, createBatchItem({ startRun: createRunsRoutes(runs).start, runs: deps.ledger }));
}
