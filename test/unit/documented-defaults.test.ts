import { describe, expect, it } from 'vitest';
import { RunConfig } from '../../lambdas/records/ledger-records.js';
import { loopSettings } from '../../lambdas/guards/loops.js';
import { compactionSettings } from '../../lambdas/conversation/compaction.js';
import { toolTimeoutMs, type ToolDefinition } from '../../lambdas/define/tool.js';
import { undecided } from '../../lambdas/tools/effects.js';
import { StartBatchBody } from '../../lambdas/runs/batch.js';
import { ForkRequest } from '../../lambdas/runs/fork.js';
import { DEFAULT_LEASE_MICROS } from '../../lambdas/records/fleet.js';
import { documentedDefault, leadingValue, literalFields } from '../support/documented-default.js';

/**
 * The `@default` a user reads on an option is what the code does when the option is left out: each
 * row reads the doc's default from the source and the default the code applies (a schema's parse of
 * nothing, the settings a function fills in), never a copy of either. The construct props' own
 * defaults are held by test/infra/documented-defaults.test.ts.
 */
describe('documented defaults', () => {
  const config = RunConfig().parse({});

  it.each(Object.keys(config) as (keyof RunConfig)[])("RunConfig's %s: its @default is what a run gets without it", (field) => {
    expect(leadingValue(documentedDefault('lambdas/records/ledger-records.ts', 'RunConfig', field)), `RunConfig.${field}`).toBe(config[field]);
  });

  it("AgentDefinition's budgets: its @default lists every budget and setting a run gets from RunConfig", () => {
    expect(literalFields(documentedDefault('lambdas/define/agent.ts', 'AgentDefinition', 'budgets'))).toEqual(config);
  });

  const loops = loopSettings(undefined);
  it.each(Object.keys(loops) as (keyof typeof loops)[])("LoopOptions' %s: its @default is the loop detector's", (field) => {
    expect(leadingValue(documentedDefault('lambdas/define/agent.ts', 'LoopOptions', field)), `LoopOptions.${field}`).toBe(loops[field]);
  });

  it.each(['share', 'keepRecentTurns'] as const)("CompactionOptions' %s: its @default is what compaction applies", (field) => {
    const settings = compactionSettings({ contextWindow: 200_000 })!;
    expect(leadingValue(documentedDefault('lambdas/define/agent.ts', 'CompactionOptions', field)), `CompactionOptions.${field}`).toBe(settings[field]);
  });

  it("ToolDefinition's timeoutMs: its @default is the timeout of a tool that sets none", () => {
    expect(leadingValue(documentedDefault('lambdas/define/tool.ts', 'ToolDefinition', 'timeoutMs'))).toBe(toolTimeoutMs({}));
  });

  it("ToolDefinition's maxReconciles: a call is reconciled that many times by default, and escalated at the next", () => {
    const documented = leadingValue(documentedDefault('lambdas/define/tool.ts', 'ToolDefinition', 'maxReconciles')) as number;
    const tool = { name: 'notify', reconcile: async () => ({ found: false }) } as unknown as ToolDefinition;
    // The first claim sends; each claim after it reconciles once.
    expect(undecided(tool, documented + 1), 'the last reconcile allowed').toBeUndefined();
    expect(undecided(tool, documented + 2), 'one reconcile past it').toBeDefined();
  });

  it("StartBatchOptions' concurrency: its @default is what the runs API starts a batch with", () => {
    const documented = leadingValue(documentedDefault('client/connect.ts', 'StartBatchOptions', 'concurrency'));
    expect(documented).toBe(StartBatchBody.parse({ items: [{}] }).concurrency);
    expect(leadingValue(documentedDefault('lambdas/runs/batch.ts', 'StartBatchBody', 'concurrency'))).toBe(documented);
  });

  it("a fork's effects (StartOptions.fork): its @default is what the runs API forks with", () => {
    expect(leadingValue(documentedDefault('lambdas/runs/fork.ts', 'ForkRequest', 'effects'))).toBe(ForkRequest().parse({ from: 'day1', at: 2 }).effects);
  });

  it("FleetBudgetProps' leaseDollars: its @default is the lease the fleet guard takes", () => {
    expect(leadingValue(documentedDefault('infra/fleet-budget.ts', 'FleetBudgetProps', 'leaseDollars'))).toBe(DEFAULT_LEASE_MICROS / 1_000_000);
  });
});
