/**
 * Each command's examples, printed at the end of its help (`savepoint <command> --help`): what a
 * user types most, copied from the guides. test/cli/command-line.test.ts holds every command to
 * having some, and each example to naming its command and only options it has.
 */
export const EXAMPLES: Readonly<Record<string, readonly string[]>> = {
  run: [
    'savepoint run --agent refund-reconciler',
    `savepoint run --agent ./my-agent.ts --input '{"inbox":"support"}' --model anthropic:claude-haiku-4-5`,
    'savepoint run --agent refund-reconciler --fail-rate 0.05 --seed 3 --state-dir /tmp/flaky',
  ],
  serve: ['savepoint serve --agent refund-reconciler', 'savepoint serve --agent refund-reconciler --agent support-triage --port 4321'],
  mcp: ['savepoint mcp --agent refund-reconciler', 'savepoint mcp --agent refund-reconciler --http --port 4322'],
  resume: ['savepoint resume refunds-2026-11-28', 'savepoint resume refunds-2026-11-28 --approve approve'],
  status: ['savepoint status refunds-2026-11-28', 'savepoint status refunds-2026-11-28 --json --stack Agents --region eu-west-1'],
  verify: ['savepoint verify refunds-2026-11-28', 'savepoint verify --all --json'],
  trace: ['OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 savepoint trace refunds-2026-11-28', 'savepoint trace refunds-2026-11-28 --print'],
  approvals: ['savepoint approvals', 'savepoint approvals --json --stack Agents'],
  approve: ['savepoint approve apv_menVlycVcPko2IdJz5KR5w --reason "checked the order"'],
  reject: ['savepoint reject apv_menVlycVcPko2IdJz5KR5w --reason "the amount does not match the order"'],
  kill: ['savepoint kill refunds-2026-11-28 --reason "wrong day"', 'savepoint kill --all --reason "the payments provider is down"', 'savepoint kill --all --lift'],
  migrate: ['savepoint migrate refunds-2026-11-28 --to 2 --stack Agents'],
  replay: ['savepoint replay refunds-2026-11-28', 'savepoint replay refunds-2026-11-28 --json', 'savepoint replay --all --agent ./agent.ts'],
  fork: ['savepoint fork refunds-2026-11-28 --at 12 --effects dry', `savepoint fork refunds-2026-11-28 --at 12 --result '1={"status":"refunded"}' --yes`],
  runs: ['savepoint runs --status running', 'savepoint runs --since 2026-11-01 --limit 20 --json'],
  batch: ['savepoint batch --agent refund-reconciler --items days.json --concurrency 5 --batch-id november', 'savepoint batch --agent refund-reconciler --manifest s3://acme-batches/days.csv --key date'],
  breakers: ['savepoint breakers', 'savepoint breakers --stack Agents --json'],
  world: ['savepoint world --agent refund-reconciler'],
  // `effects resolve`'s are in its own help (cli/commands/effects.ts).
  effects: ['savepoint effects', 'savepoint effects --json --stack Agents'],
  prune: ['savepoint prune --finished-before 2026-09-01 --dry-run', 'savepoint prune --finished-before 2026-09-01', 'savepoint prune --finished-before 2026-09-01 --stack Agents'],
  console: ['savepoint console', 'savepoint console --stack Agents --region eu-west-1'],
};

/** The help text after a command's options: its examples. */
export function examplesHelp(command: string): string {
  const examples = EXAMPLES[command];
  return examples ? `\nExamples:\n${examples.map((example) => `  ${example}`).join('\n')}` : '';
}
