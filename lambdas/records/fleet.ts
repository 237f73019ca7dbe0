import * as z from 'zod';
import { schemaOnFirstUse } from '../shared/on-first-use.js';

/**
 * A fleet budget (issue 34 item 4): dollars per day and runs at once, per agent and per stack, set
 * by the deployment (the construct's `fleetBudget` on an agent and on its stack; `savepoint run`
 * / `serve --fleet-…`; `LocalStackOptions.fleetBudget`), never by a run or by the model. Each
 * model call is reserved against it before it is sent, like a run's own budget
 * (guards/reservation.ts); the runs lease it from one counter item per scope and day in chunks
 * (ledger/fleet-leases.ts), so the counter is written once per chunk, not once per call.
 *
 *   pk = FLEET#<agent>:<day>         sk = FLEET   the agent's counter of the day (UTC)
 *   pk = STACKFLEET#<stack>:<day>    sk = FLEET   the stack's, shared by its agents
 *
 * An agent's roles reach only its own counters (`FLEET#<agent>:*`) and their stack's
 * (`STACKFLEET#<stack>:*`): infra/ledger-table.ts partitionsOf.
 */

/** One scope's limits: dollars per UTC day, runs holding a lease at once. */
export const FleetLimits = schemaOnFirstUse(() =>
  z
    .object({
      /** Dollars all the scope's runs may spend per UTC day (model calls, reserved before they are sent). */
      dollarsPerDay: z.number().positive().max(1_000_000).optional(),
      /** Runs of the scope that may hold a lease at once (runs that made a model call today and have not ended). */
      concurrentRuns: z.number().int().positive().max(1_000_000).optional(),
    })
    .strict(),
);
export type FleetLimits = z.infer<ReturnType<typeof FleetLimits>>;

export const FLEET_WHEN_SPENT = ['stop', 'wait'] as const;

/** The deployment's fleet budget, as the steps are given it (the `FLEET_BUDGET` variable: JSON of this). */
export const FleetBudget = schemaOnFirstUse(() =>
  z
    .object({
      /** The agent's own limits. */
      agent: FleetLimits().optional(),
      /** The stack's, shared by every agent of it: `name` keys its counters (the stack's name). */
      stack: FleetLimits().extend({ name: z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/) }).strict().optional(),
      /** What a model call the budget cannot take does: `stop` the run, saying why, or `wait` for budget (a lease returned, the next day). */
      whenSpent: z.enum(FLEET_WHEN_SPENT).optional(),
      /** The most one lease takes at once, in dollars (less as a day's budget runs low). */
      leaseDollars: z.number().positive().max(1_000).optional(),
    })
    .strict(),
);
export type FleetBudget = z.infer<ReturnType<typeof FleetBudget>>;

/**
 * @default the lease chunk: $0.25, about ten calls of a mid-sized model. Sized for the counter, one
 * DynamoDB item of ~1,000 write units a second: at 100 starts a second $0.05 chunks throttled it
 * millions of times, $0.25 chunks not once (bench/fleet-model.ts, docs/benchmarks.md). A small
 * day's budget is not tied up by it: a lease takes at most 1/16 of what is left of the day.
 */
export const DEFAULT_LEASE_MICROS = 250_000;
/** A lease takes at most this share of what is left of a day's budget: leases shrink as it runs low, so the last dollars are not held by a few runs. */
export const LEASE_SHARE_OF_REMAINING = 1 / 16;

/** The UTC day of `now`, as counters name it: `2026-12-02`. */
export const fleetDay = (now: Date): string => now.toISOString().slice(0, 10);

export const FLEET_SK = 'FLEET';
export const agentCounterPk = (agent: string, day: string) => `FLEET#${agent}:${day}`;
export const stackCounterPk = (stack: string, day: string) => `STACKFLEET#${stack}:${day}`;

/** A counter the runs lease from: its partition key and its limits in micro-dollars and runs. */
export interface FleetCounter {
  readonly pk: string;
  /** Human name of the scope: `agent refunds`, `stack Prod`. */
  readonly scope: string;
  readonly limitMicros?: number;
  readonly concurrentRuns?: number;
}

/** The counters of `agent`'s runs on `day` under `budget`: those whose scope sets a limit. */
export function fleetCounters(agent: string, budget: FleetBudget | undefined, day: string): FleetCounter[] {
  const of = (pk: string, scope: string, limits: FleetLimits): FleetCounter[] =>
    limits.dollarsPerDay === undefined && limits.concurrentRuns === undefined
      ? []
      : [{ pk, scope, ...(limits.dollarsPerDay !== undefined && { limitMicros: Math.round(limits.dollarsPerDay * 1_000_000) }), ...(limits.concurrentRuns !== undefined && { concurrentRuns: limits.concurrentRuns }) }];
  return [
    ...(budget?.agent ? of(agentCounterPk(agent, day), `agent ${agent}`, budget.agent) : []),
    ...(budget?.stack ? of(stackCounterPk(budget.stack.name, day), `stack ${budget.stack.name}`, budget.stack) : []),
  ];
}

/**
 * A run's lease of the day (on its run record): what it took from the counters `counters`, and
 * where its spending was when it took the first of the day (`base`: its costMicros +
 * reservedMicros − childCostMicros then). What it has used of it is its spending since:
 * costMicros + reservedMicros − childCostMicros − base. Its child runs' dollars are theirs to
 * lease (records/counters.ts `childCostMicros`).
 */
export interface FleetLease {
  readonly day: string;
  /** The counters' partition keys it leased from. */
  readonly counters: readonly string[];
  /** Micro-dollars taken (less what was given back). */
  readonly leased: number;
  readonly base: number;
  /** Given back (the run ended or handed off): its unused part is back in the counters, and the run holds no lease. */
  readonly returned?: true;
}

/** One counter item of a day. */
export interface FleetDayRecord {
  readonly kind: 'fleetDay';
  readonly key: string;
  readonly day: string;
  /** Micro-dollars the runs hold or spent: every lease taken, less the unused parts given back. Never above the limit. */
  readonly leased: number;
  /** Runs holding a lease now. */
  readonly runs: number;
  /** Leases taken (the writes a day's budget cost the counter): what the fleet model counts. */
  readonly leases: number;
  readonly limitMicros?: number;
  readonly updatedAt: string;
}
