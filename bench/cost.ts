/**
 * `npm run bench -- --cost`: what the sample day costs in model dollars, with prompt caching and
 * without, measured on the real local pipeline (synthesized definition, in-process engine, Lambda
 * handlers, dynalite ledger, the simulated model over HTTP, which bills prompt caching the way
 * Anthropic does: sim/wire/prompt-cache.ts).
 *
 * The two runs differ only in whether the model client sends `cache_control` breakpoints. Their
 * decisions — every tool call, its arguments and its outcome — must be identical, or the figures
 * compare different work and the benchmark fails. The same recorded usage is then priced for other
 * models of the price table, for docs/model-providers.md's "What it costs".
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { Day } from '../agents/refund-reconciler/domain.js';
import { stableJson } from '../lambdas/define.js';
import type { Usage } from '../lambdas/records/messages.js';
import { costOf, DEFAULT_PRICE_TABLE } from '../lambdas/models/prices.js';
import { synthesizeTemplate } from '../local/template/synthesize.js';
import { benchStack, BENCH_CONFIG } from './pipeline.js';

const { values } = parseArgs({ options: { cost: { type: 'boolean', default: false }, json: { type: 'boolean', default: false } } });
const day = Day.parse(JSON.parse(readFileSync(new URL('../agents/refund-reconciler/sample-day.json', import.meta.url), 'utf8')));
// The refund reconciler's own stack: each agent's roles reach only its own effects and aggregates (EFFECT#<agent>:*).
const template = await synthesizeTemplate('refund-reconciler');
const progress = (line: string) => process.stderr.write(`${line}\n`);

/** Other models the same turns are priced for (their own tokenizers differ: an estimate). */
const ALSO_PRICED = ['anthropic:claude-sonnet-4-6', 'anthropic:claude-haiku-4-5', 'bedrock:us.anthropic.claude-haiku-4-5-20251001-v1:0', 'openai:gpt-5-mini', 'bedrock:us.amazon.nova-pro-v1:0'];

interface Measured {
  dollars: number;
  turns: number;
  usage: Required<Usage>;
  usages: Usage[];
  decisions: string[];
}

async function measure(promptCaching: boolean): Promise<Measured> {
  const stack = await benchStack({ day, template, failRate: 0, seed: 1, promptCaching, retryDelayMs: 1 });
  try {
    const runId = `cost-${promptCaching ? 'cached' : 'uncached'}`;
    // Approvals expire unanswered (after 1 s) in both runs: the same decisions, no person needed.
    const { executionArn } = stack.engine.startExecution({ name: runId, input: { runId, input: { date: day.date }, config: { ...BENCH_CONFIG, approvalTimeoutSeconds: 1 } } });
    const done = await stack.engine.waitForExecution(executionArn);
    if (done.status !== 'SUCCEEDED') throw new Error(`run ${runId} ended ${done.status}: ${done.error ?? ''} ${done.cause ?? ''}`);
    const run = (await stack.ledger.getRun(runId))!;
    const { turns, calls } = await stack.ledger.listConversation(runId);
    const usage = { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 };
    for (const turn of turns) for (const key of Object.keys(usage) as (keyof Usage)[]) usage[key] += turn.usage[key] ?? 0;
    return {
      dollars: run.costMicros / 1e6,
      turns: turns.length,
      usage,
      usages: turns.map((turn) => turn.usage),
      // Times (an approval's deadline quoted in a reason) differ between any two runs; the decision does not.
      decisions: calls.map((call) => stableJson({ turn: call.turn, call: call.call, name: call.name, args: call.args, outcome: call.outcome }).replace(/\d{4}-\d\d-\d\dT[\d:.]+Z/g, '<time>')),
    };
  } finally {
    await stack.close();
  }
}

progress('cost: the sample day without prompt caching…');
const uncached = await measure(false);
progress('cost: the sample day with prompt caching…');
const cached = await measure(true);
if (stableJson(cached.decisions) !== stableJson(uncached.decisions)) {
  const first = cached.decisions.findIndex((decision, i) => decision !== uncached.decisions[i]);
  throw new Error(
    `the runs with and without caching decided differently (the figures would compare different work): first at tool call ${first + 1}: ${cached.decisions[first] ?? '(none)'} vs ${uncached.decisions[first] ?? '(none)'}`,
  );
}
const ratio = cached.dollars / uncached.dollars;
const priceOf = (spec: string, usages: Usage[]) => usages.reduce((sum, usage) => sum + costOf(spec, usage), 0);
const models = ALSO_PRICED.map((spec) => ({ spec, uncached: priceOf(spec, uncached.usages), cached: priceOf(spec, cached.usages) }));

const result = {
  priceTable: DEFAULT_PRICE_TABLE.version,
  model: 'sim:savepoint-sim-1 (billed as a Sonnet-class model: $3 in, $15 out, $3.75 cache write, $0.30 cache read per MTok)',
  turns: cached.turns,
  toolCalls: cached.decisions.length,
  identicalDecisions: true,
  uncached: { dollars: uncached.dollars, usage: uncached.usage },
  cached: { dollars: cached.dollars, usage: cached.usage },
  ratio,
  target: 0.3,
  otherModels: models,
};
if (values.json) {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
} else {
  const money = (d: number) => `$${d.toFixed(4)}`;
  const tokens = (u: Required<Usage>) => `${u.input_tokens + u.cache_creation_input_tokens + u.cache_read_input_tokens} in (${u.cache_read_input_tokens} read from cache, ${u.cache_creation_input_tokens} written), ${u.output_tokens} out`;
  const lines = [
    `the sample day (${result.turns} model turns, ${result.toolCalls} tool calls, the same decisions both ways), price table ${result.priceTable}`,
    `  model      ${result.model}`,
    `  uncached   ${money(uncached.dollars)}   ${tokens(uncached.usage)}`,
    `  cached     ${money(cached.dollars)}   ${tokens(cached.usage)}`,
    `  ratio      ${(ratio * 100).toFixed(1)}% of the uncached dollars (target ≤ 30%)`,
    '  the same turns priced for other models (uncached → cached):',
    ...models.map((m) => `    ${m.spec.padEnd(56)} ${money(m.uncached)} → ${money(m.cached)}`),
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
}
if (ratio > 0.3) process.exitCode = 1;
