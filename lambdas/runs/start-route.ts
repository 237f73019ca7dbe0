import * as z from 'zod';
import type { AgentDefinition } from '../define.js';
import type { DecisionMac } from '../approvals/decision-mac.js';
import type { ApprovalPolicy, Identity } from '../approvals/policy.js';
import { starterPerson } from '../approvals/people.js';
import { InvalidInputError, NotFoundError } from '../shared/errors.js';
import type { RunLedger } from '../ledger/ledger.js';
import { deploymentPrices, priceFor, type PriceTable } from '../models/prices.js';
import type { Clock } from '../shared/ports.js';
import { parseOrThrow } from '../shared/validation.js';
import type { BudgetCaps } from '../records/ledger-records.js';
import { budgetCeilings, overBudgetRequest } from './budget-caps.js';
import { executionInputTooLarge, modelSpecOf, newRunTooLarge, namedConfig, RunId, RunRequest, RequestTooLarge, runIdOf } from './run-request.js';
import { signStarter } from './starter.js';
import { unqualifiedArn } from './versions.js';
import { schemaOnFirstUse } from '../shared/on-first-use.js';

/**
 * `POST /runs`: a run request as the client sends it — no `startedBy` (the caller is who the
 * transport proved) and no `migrate` (`savepoint migrate` names its operator itself) — and where
 * to start it: `stateMachineArn` (the state machine, its alias or one of its versions: an
 * unfinished run resumes on its own version) and the execution's name.
 */
export const StartRunBody = schemaOnFirstUse(() =>
  RunRequest().omit({ startedBy: true, startedByMac: true, migrate: true })
    .extend({
      stateMachineArn: z.string().min(1).max(2048).optional(),
      /** StartExecution's `name` rules: 1-80 letters, digits, "-" or "_". @default `<runId>-<time in base 36>` */
      executionName: z.string().regex(/^[A-Za-z0-9_-]{1,80}$/).optional(),
    })
    .strict(),
);
export type StartRunBody = z.infer<ReturnType<typeof StartRunBody>>;

export interface StartRouteDeps {
  agent: AgentDefinition;
  /** Signs the starter (the runs API alone may: a KMS key's `kms:GenerateMac`, a key file locally). */
  starterMac: DecisionMac;
  /** Where runs start unless the body names a version: the alias (`STATE_MACHINE_ARN`). */
  stateMachineArn: string;
  /** `StartExecution` on `stateMachineArn` (idempotent by name). */
  start(stateMachineArn: string, name: string, input: string): Promise<{ executionArn: string }>;
  clock: Clock;
  /** The deployment's ceilings on what a run request may ask for (runs/budget-caps.ts). @default none: the agent's */
  maxBudgets?: BudgetCaps;
  /** The deployment's prices (its overrides over the agent's over the built-in table), as StartRun has them. @default the agent's over the built-in table */
  prices?: PriceTable;
  /** The stack's model, which StartRun runs on unless the request names one (`MODEL`). */
  defaultModel?: string;
  /** The ledger's runs, read for a fork's parent (the runs API's role may `GetItem` on the ledger, nothing more). */
  runs: Pick<RunLedger, 'getRun'>;
  /** The people the deployment names (approvals/people.ts): who may start, and the name a starter is recorded under. @default none: a caller starts as itself */
  people?: Pick<ApprovalPolicy, 'approverPrincipals' | 'starterPrincipals'>;
}

/** A start refused for who asked (403), not for what they asked. */
export class StarterRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StarterRefused';
  }
}

/**
 * Starts a run as `caller`: the request is checked as StartRun would (the run id, the agent's
 * input schema) so a bad one is a 400 here rather than a failed execution, then signed with its
 * starter (runs/starter.ts) and started.
 */
export function createStartRoute(deps: StartRouteDeps) {
  const machine = unqualifiedArn(deps.stateMachineArn);
  return async (caller: Identity, body: unknown): Promise<{ runId: string; executionArn: string; startedBy: string }> => {
    // The starter is a person the deployment names, when it names one for this principal (approvals/people.ts).
    const starter = starterPerson(caller.principal ?? caller.id, caller.id, deps.people ?? {});
    if (!starter.ok) throw new StarterRefused(`caller: ${starter.message}`);
    const { stateMachineArn, executionName, ...request } = parseOrThrow(StartRunBody(), body, 'run request');
    const input = parseOrThrow(deps.agent.input, request.input, `input of agent ${deps.agent.name}`);
    const runId = parseOrThrow(RunId(), request.runId ?? runIdOf(deps.agent, input), 'runId');
    // A model StartRun would refuse for want of a price is refused here, before anything starts:
    // a 400 at once, not a 202 and a failed run. (A fork's model is its parent's unless it names one.)
    if (request.model !== undefined || request.fork === undefined) {
      const prices = deps.prices ?? deploymentPrices(deps.agent.prices, undefined);
      const model = request.model ?? modelSpecOf(deps.defaultModel ?? deps.agent.model, deps.defaultModel ? 'stack model' : `model of agent ${deps.agent.name}`);
      for (const spec of [model, ...(deps.agent.fallbackModel ? [deps.agent.fallbackModel] : [])]) priceFor(spec, prices);
    }
    // A fork of a run the ledger does not hold is a 404 here, not a 202 and a failed execution.
    if (request.fork) {
      if (request.fork.from === runId) throw new InvalidInputError(`runId: a fork needs a run id of its own, not its parent's (${runId})`);
      if (!(await deps.runs.getRun(request.fork.from))) throw new NotFoundError(`fork.from: no run ${request.fork.from} in the ledger`);
    }
    const config = request.config && namedConfig(body, request.config);
    // Refused here, as StartRun would refuse it, so the caller gets a 400 and nothing starts.
    const overBudget = config && overBudgetRequest(config, budgetCeilings(deps.agent, deps.maxBudgets));
    if (overBudget) throw overBudget;
    const target = stateMachineArn ?? deps.stateMachineArn;
    if (!belongsTo(target, machine)) throw new InvalidInputError(`stateMachineArn: ${target} is not ${machine}, its alias or one of its versions`);
    // Exactly what is sent is what is signed: the request as JSON, undefined fields dropped.
    // The settings as the caller named them, no defaults filled in (those would override the agent's budgets).
    const sent = JSON.parse(JSON.stringify({ ...request, ...(config && { config }), runId })) as Record<string, unknown>;
    const signed = await signStarter(deps.starterMac, sent, starter.person);
    const name = executionName ?? `${runId}-${deps.clock.now().getTime().toString(36)}`.slice(0, 80);
    const executionInput = JSON.stringify(signed);
    // Both said here with a 413, before anything starts: StartRun would refuse the run record (less
    // the request's shape, which the agent alone makes), StartExecution the input.
    const tooLarge = executionInputTooLarge(executionInput, 'input') ?? (request.fork === undefined ? newRunTooLarge(deps.agent, input, 'input') : undefined);
    if (tooLarge) throw new RequestTooLarge(tooLarge);
    const { executionArn } = await deps.start(target, name, executionInput);
    return { runId, executionArn, startedBy: starter.person };
  };
}

function belongsTo(arn: string, machine: string): boolean {
  return arn === machine || (arn.startsWith(`${machine}:`) && /^[A-Za-z0-9_-]{1,80}$/.test(arn.slice(machine.length + 1)));
}
