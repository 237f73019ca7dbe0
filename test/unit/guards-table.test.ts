import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { budgetTrip, guardFigures, spentBy } from '../../lambdas/guards/budgets.js';
import { BUDGET_FIELDS, EXTENDABLE_GUARDS, RunConfig } from '../../lambdas/records/ledger-records.js';
import { COUNTED_GUARDS, GUARDS, remainingOf, spentOf } from '../../lambdas/records/guards.js';
import { runSpans } from '../../lambdas/telemetry/spans.js';
import { runRecord } from '../support/records.js';

/**
 * Issue 37, item 4: the budget guards are one table (lambdas/records/guards.ts) that the ledger's
 * extensions, fork, telemetry, the console and the CLI read, so a new budget is its config field,
 * its row and its test.
 */
describe('the GUARDS table', () => {
  it('has one row per budget, each on a run-config field with a default, all extendable with the loop detector', () => {
    const defaults = RunConfig().parse({});
    expect(GUARDS.map((row) => row.guard)).toEqual(['steps', 'tokens', 'dollars', 'wallClock']);
    for (const row of GUARDS) expect(defaults[row.field], row.field).toBeGreaterThan(0);
    expect(BUDGET_FIELDS).toEqual({ steps: 'maxSteps', tokens: 'maxTokens', dollars: 'maxDollars', wallClock: 'maxWallSeconds' });
    expect(EXTENDABLE_GUARDS).toEqual(['steps', 'tokens', 'dollars', 'wallClock', 'loop']);
  });

  it('shows each budget as the stop reasons, the CLI report and telemetry always have', () => {
    const run = runRecord({ steps: 7, inputTokens: 100, outputTokens: 20, costMicros: 32_100, createdAt: '2026-11-01T00:00:00.000Z', config: RunConfig().parse({ maxSteps: 7, maxTokens: 120, maxDollars: 0.03, maxWallSeconds: 60 }) });
    const figures = guardFigures(run, new Date('2026-11-01T00:00:30.000Z'));
    expect(GUARDS.map((row) => `${row.label}: ${row.report(figures[row.figure])}`)).toEqual(['steps: 7 / 7', 'tokens: 120 / 120 (max 2048 per turn)', 'dollars: 0.0321 / 0.03', 'wall clock: 30 s / 60 s']);
    expect(budgetTrip(run, new Date('2026-11-01T00:00:30.000Z'))).toEqual({ guard: 'steps', reason: 'budget exceeded: steps 7 / 7' });
    expect(budgetTrip({ ...run, steps: 1, inputTokens: 1 }, new Date('2026-11-01T00:00:30.000Z'))).toEqual({ guard: 'dollars', reason: 'budget exceeded: dollars 0.0321 / 0.03' });
    // The wall clock is checked first: it is known before the next call, like the steps.
    expect(budgetTrip(run, new Date('2026-11-01T00:01:00.000Z'))).toEqual({ guard: 'wallClock', reason: 'budget exceeded: wall clock 60 s / 60 s' });
    expect(runSpans(run)[0]?.attributes).toMatchObject({ 'savepoint.budget.remaining.steps': 0, 'savepoint.budget.remaining.tokens': 0, 'savepoint.budget.remaining.usd': -0.0021 });
  });

  it('counts dollars in micro-dollars, so that what is left stays exact', () => {
    const dollars = COUNTED_GUARDS.find((row) => row.guard === 'dollars')!;
    const spent = spentBy(runRecord({ costMicros: 100_000 }));
    expect(spentOf(dollars, spent)).toBe(0.1);
    expect(remainingOf(dollars, 0.3, spent)).toBe(0.2);
    expect(0.3 - 0.1).not.toBe(0.2);
  });

  // The readers of the budgets read the table: none names a budget's field.
  it.each(['lambdas/telemetry/spans.ts', 'lambdas/runs/fork.ts', 'console/views.ts', 'cli/format.ts'])('%s names no budget field', (file) => {
    const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
    expect(code.match(/\b(maxSteps|maxTokens|maxDollars|maxWallSeconds)\b|\bguards\.(steps|tokens|dollars|wallSeconds)\b/g) ?? []).toEqual([]);
  });
});
