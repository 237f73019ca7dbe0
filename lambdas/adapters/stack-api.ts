import type middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import * as z from 'zod';
import type { AgentDefinition } from '../define.js';
import type { ApprovalDeps } from '../approvals/decision.js';
import { deploymentPrices } from '../models/prices.js';
import { AgentApiSettings } from '../runs/api-settings.js';
import type { RunsApiDeps } from '../runs/runs-api.js';
import { createStackRunsRoutes } from '../runs/stack-routes.js';
import { runFeeds } from '../runs/event-feed.js';
import { readRunRecords } from '../runs/events.js';
import { awsStreamLimits } from '../runs/stream-limits.js';
import { LIVE_ALIAS } from '../runs/versions.js';
import { parseOrThrow } from '../shared/validation.js';
import { stackApprovalApiHandler } from './approval-http.js';
import type { AwsClients } from './aws-clients.js';
import { awsDeps, jsonVariable } from './aws-deps.js';
import { powertools } from './powertools.js';
import { createRunEventsRoute } from './run-events-http.js';
import { runsRoutesHandler } from './runs-http.js';
import { decisionMetrics } from './step-telemetry.js';

/**
 * The environment of the stack's API functions beside awsDeps' (the ledger, the keys): the agents
 * they serve, each by its deployed name, and where each agent's state machine is. A few bytes per
 * agent with the defaults (Lambda's 4 KB for all variables is checked at synth: infra/step-function.ts).
 */
export const StackApiEnvironment = z.object({
  /** The metrics' `service` dimension: the stack's name. */
  POWERTOOLS_SERVICE_NAME: z.string().min(1),
  /** Every agent's state machine is `<prefix><agent>`: runs start on its `live` alias. */
  STATE_MACHINE_ARN_PREFIX: z.string().startsWith('arn:'),
  /** The agents served, by name, and what the deployment set for each (JSON). */
  AGENT_SETTINGS: jsonVariable(z.record(z.string().min(1), AgentApiSettings)),
  /** The stack's batch state machine (infra/batch-state-machine.ts), set when an agent has `batches`. */
  BATCH_STATE_MACHINE_ARN: z.string().startsWith('arn:').optional(),
});

/**
 * The agents of the bundle (`@savepoint/agents-entry`), each with the settings the deployment gave
 * it: an agent bundled but not deployed under its own name (its `agentName` is not its `name`) or
 * deployed but not bundled fails the cold start, naming it — never a request served by the wrong agent.
 */
export function servedAgents(agents: readonly AgentDefinition[], settings: Readonly<Record<string, AgentApiSettings>>): Map<string, { agent: AgentDefinition; settings: AgentApiSettings }> {
  const served = new Map<string, { agent: AgentDefinition; settings: AgentApiSettings }>();
  for (const agent of agents) {
    const own = settings[agent.name];
    if (own === undefined) throw new Error(`invalid Lambda environment: AGENT_SETTINGS: the bundle holds agent ${agent.name}, which the stack deploys under no agentName of that name (it deploys ${Object.keys(settings).join(', ')})`);
    if (served.has(agent.name)) throw new Error(`the bundle holds two agents named ${agent.name}`);
    served.set(agent.name, { agent, settings: own });
  }
  const missing = Object.keys(settings).filter((name) => !served.has(name));
  if (missing.length > 0) throw new Error(`invalid Lambda environment: AGENT_SETTINGS: agent ${missing.join(', ')} is deployed but not in the bundle`);
  return served;
}

/** An agent's approval policy, as the deployment set it (approvals/policy.ts). */
function policyOf(settings: AgentApiSettings): NonNullable<ApprovalDeps['policy']> {
  return {
    separationOfDuties: settings.separationOfDuties ?? true,
    ...(settings.secondApproverAboveMinor !== undefined && { secondApproverAboveMinor: settings.secondApproverAboveMinor }),
    approverPrincipals: settings.approverPrincipals ?? {},
    ...(settings.starterPrincipals && { starterPrincipals: settings.starterPrincipals }),
    ...(settings.unknownStarter && { unknownStarter: settings.unknownStarter }),
  };
}

/**
 * The handlers of the stack's API functions (issue 34: one approval callback, one runs function and
 * one events function per stack, lambdas/handlers/ approval-callback, runs-api, run-events), each
 * serving every agent of its bundle through the same routes one agent's API has
 * (lambdas/runs/stack-routes.ts, adapters/approval-http.ts `createStackApprovalApi`).
 */
export function stackApiHandlers(agents: readonly AgentDefinition[], options: { env?: NodeJS.ProcessEnv; clients?: AwsClients } = {}) {
  const env = options.env ?? process.env;
  const config = parseOrThrow(StackApiEnvironment, env, 'Lambda environment');
  const served = servedAgents(agents, config.AGENT_SETTINGS);
  const { telemetry, tracing, traced } = powertools(config.POWERTOOLS_SERVICE_NAME);
  const deps = awsDeps(env, { traced, telemetry }, undefined, undefined, options.clients);
  const decisions: middy.MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> = {
    after: (request) => {
      telemetry.addMetrics(decisionMetrics(request.event.httpMethod, request.response?.statusCode));
      telemetry.flush();
    },
  };
  const sfn = () => {
    if (!options.clients?.stepFunctions) throw new Error("this function's handler passes no Step Functions client: add it to the clients of its file in lambdas/handlers/ (lambdas/adapters/aws-clients.ts)");
    return options.clients.stepFunctions(traced);
  };
  return {
    approvalApi: () => {
      const shared = deps.approvals ?? {};
      const callbacks = deps.callbacks;
      const byAgent = new Map<string, ApprovalDeps>();
      for (const [name, { settings }] of served) {
        const decisionMac = settings.decisionKeyId && options.clients?.decisionMac ? options.clients.decisionMac(settings.decisionKeyId, settings.previousDecisionKeyIds ?? []) : shared.decisionMac;
        byAgent.set(name, {
          ledger: deps.ledger,
          callbacks,
          clock: deps.clock,
          agentName: name,
          policy: policyOf(settings),
          ...(shared.links && { links: { ...shared.links, approvers: (settings.approvers ?? '').split(',').map((approver) => approver.trim()).filter(Boolean) } }),
          ...(decisionMac && { decisionMac }),
        });
      }
      return stackApprovalApiHandler(byAgent, deps.ledger, [tracing, decisions as middy.MiddlewareObj]);
    },
    runsApi: () => {
      const starterMac = deps.approvals?.starterMac;
      if (!starterMac) throw new Error('invalid Lambda environment: STARTER_KEY_ID: required');
      const client = sfn();
      const batchStore = config.BATCH_STATE_MACHINE_ARN ? client.batches(config.BATCH_STATE_MACHINE_ARN) : undefined;
      const readManifest = options.clients?.manifestReader?.(traced);
      const byAgent = new Map<string, RunsApiDeps>();
      for (const [name, { agent, settings }] of served) {
        byAgent.set(name, {
          agent,
          starterMac,
          runs: deps.ledger,
          ledger: deps.ledger,
          stop: (arn, error, cause) => client.executions.stop(arn, error, cause),
          ...(deps.children && { children: deps.children }),
          ...(batchStore && settings.batchItemFunction && { batches: { store: batchStore, itemFunction: settings.batchItemFunction, ...(readManifest && { readManifest }) } }),
          stateMachineArn: `${config.STATE_MACHINE_ARN_PREFIX}${name}:${LIVE_ALIAS}`,
          start: (arn, executionName, input) => client.starter(arn).start(executionName, input),
          clock: deps.clock,
          prices: deploymentPrices(agent.prices, settings.prices),
          ...(settings.maxBudgets && { maxBudgets: settings.maxBudgets }),
          ...(settings.model && { defaultModel: settings.model }),
          people: policyOf(settings),
        });
      }
      return runsRoutesHandler(createStackRunsRoutes(byAgent, deps.ledger), [tracing]);
    },
    /** `GET /v1/runs/{id}/events`: any agent's run, read from the ledger (run-events-lambda.ts). */
    runEvents: () => {
      const feeds = runFeeds({ read: (runId) => readRunRecords(deps.ledger, runId), clock: deps.clock, onError: (error) => console.warn('run events: reading the ledger failed, trying again', error) });
      return (remainingMs: number) => createRunEventsRoute({ feeds, clock: deps.clock, limits: awsStreamLimits(remainingMs) });
    },
  };
}
