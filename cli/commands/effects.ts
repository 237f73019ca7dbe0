import type { Command } from 'commander';
import type { EffectResolving } from '../../lambdas/ledger/ledger.js';
import type { EffectRecord } from '../../lambdas/records/ledger-records.js';
import { RESULT_LIMIT_BYTES } from '../../lambdas/ledger/blobs.js';
import { isEscalated } from '../../lambdas/ledger/protocol.js';
import { InvalidInputError } from '../../lambdas/shared/errors.js';
import { UsageError } from '../errors.js';
import { out, printJson } from '../program.js';
import { where, withClient } from '../target.js';

/** The longest `--reason` kept on an effect (as a kill's). */
const MAX_REASON_CHARS = 500;

/**
 * `savepoint effects`: the business-key effects escalated to a person (a write whose outcome is
 * unknown: completed as `outcome_unknown`, every later run of its key answered so), and those
 * people settled; `savepoint effects resolve <key> --not-sent | --sent [--result <json>] --reason
 * <text>`: settles one once someone checked with the provider (protocol.ts `resolveEffect`). On the
 * embedded ledger of a state directory (the engine must not be running: it owns the ledger), and
 * on the DynamoDB one — a state directory's on dynalite, or a deployed stack's (`--stack`).
 */
export function registerEffectsCommand(program: Command): void {
  const effects = program
    .command('effects')
    .description('the business-key effects escalated to a person (their outcome unknown: no later run of the key sends them) and those settled; `effects resolve` settles one')
    .option('--json', 'print JSON', false)
    .action(async (options: { json: boolean }) => {
      await withEffects(async (ledgers) => {
        const listed = (await Promise.all(ledgers.map((ledger) => ledger.listEffects()))).flat().filter((effect) => effect.resolutions || isEscalated(effect));
        if (options.json) return printJson({ effects: listed.map(effectView) });
        if (listed.length === 0) return out(`no escalated effect in ${where()}`);
        for (const effect of listed) {
          const view = effectView(effect);
          out(`${view.key}  ${view.state}  ${view.tool}  run ${view.runId} (turn ${view.turn}, call ${view.call})${view.sentAt ? `  sent ${view.sentAt}` : ''}`);
          for (const resolution of effect.resolutions ?? []) {
            out(`  resolved ${resolution.as === 'sent' ? 'sent' : 'not sent'} by ${resolution.by} at ${resolution.at} (run ${resolution.runId}, turn ${resolution.turn}, call ${resolution.call}): ${resolution.reason}`);
          }
        }
      });
    });
  effects
    .command('resolve <key>')
    .description('settle an escalated effect once you checked with the provider: --not-sent (a later run of the key sends it) or --sent (later runs get --result)')
    .option('--not-sent', 'it did not take effect: the key is claimable again, a later run of it sends', false)
    .option('--sent', 'it took effect: later runs of the key are answered with --result, nothing is sent', false)
    .option('--result <json>', 'with --sent: the result later runs of the key get (JSON; default: a note that it was done)')
    .requiredOption('--reason <text>', 'what you found out, kept on the effect with your user and the time')
    .option('--json', 'print JSON', false)
    .addHelpText(
      'after',
      [
        '',
        'Examples:',
        `  savepoint effects resolve refunds:issue_refund:rr_1 --not-sent --reason "no refund rr_1 in the provider's dashboard"`,
        `  savepoint effects resolve refunds:issue_refund:rr_1 --sent --result '{"id":"re_9"}' --reason "re_9 in the dashboard" --stack Agents`,
      ].join('\n'),
    )
    .action(async (key: string, options: { notSent: boolean; sent: boolean; result?: string; reason: string; json: boolean }) => {
      if (options.sent === options.notSent) throw new UsageError('effects resolve: give --not-sent or --sent (what the provider shows)');
      if (options.result !== undefined && !options.sent) throw new UsageError('--result: only with --sent (a result is what later runs of the key get)');
      if (options.reason.trim() === '' || options.reason.length > MAX_REASON_CHARS) throw new UsageError(`--reason: 1 to ${MAX_REASON_CHARS} characters (got ${options.reason.length})`);
      const result = options.result === undefined ? undefined : checkedResult(options.result);
      const { localUser } = await import('../../local/services/approval-api.js');
      await withEffects(async (ledgers) => {
        const found = await findEffect(ledgers, key);
        if (!found) throw new UsageError(`no effect ${key} in ${where()} (\`savepoint effects\` lists the escalated ones)`);
        const { effect, ledger } = found;
        try {
          // On the escalation read: one that came after it (another run's) is not the one checked.
          const resolved = await ledger.resolveEffect(key, { as: options.sent ? 'sent' : 'not_sent', by: localUser(), reason: options.reason, ...(result !== undefined && { result }), expected: effect }, new Date());
          if (options.json) return printJson({ effect: effectView(resolved) });
          out(options.sent ? `effect ${key}: resolved as sent; later runs of its key are answered with its result` : `effect ${key}: resolved as not sent; the next run of its key sends it`);
        } catch (error) {
          if (error instanceof InvalidInputError) throw new UsageError(error.message);
          throw error;
        }
      });
    });
}

/** Runs `use` on each ledger at hand (each agent's, when serve keeps several) that lists and settles effects. */
async function withEffects(use: (ledgers: EffectResolving[]) => Promise<void>): Promise<void> {
  await withClient('effects', undefined, undefined, async ({ ledger, engine, parts }) => {
    const { effectResolvingOf } = await import('../../lambdas/ledger/storage-ledger.js');
    const resolving = (parts ?? [{ ledger }]).map((part) => effectResolvingOf(part.ledger));
    if (resolving.some((each) => !each)) {
      throw new UsageError(engine ? `effects: an engine is running on ${where()} (pid ${engine.pid}); stop it first, the engine owns the ledger while it runs` : `effects: the ledger of ${where()} cannot list effects`);
    }
    await use(resolving as EffectResolving[]);
  });
}

async function findEffect(ledgers: EffectResolving[], key: string): Promise<{ effect: EffectRecord; ledger: EffectResolving } | undefined> {
  for (const ledger of ledgers) {
    const effect = await ledger.getEffect(key);
    if (effect) return { effect, ledger };
  }
  return undefined;
}

/** `--result`: JSON, kept on the effect's record itself: at most what a call's result may be inline (blobs.ts). */
function checkedResult(text: string): string {
  try {
    JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--result: not JSON (${(error as Error).message})`);
  }
  if (Buffer.byteLength(text) > RESULT_LIMIT_BYTES) throw new UsageError(`--result: at most ${RESULT_LIMIT_BYTES} bytes (got ${Buffer.byteLength(text)})`);
  return text;
}

/** An effect as listed: its state in a person's words (`escalated`: outcome unknown, not settled). */
function effectView(effect: EffectRecord) {
  const state = isEscalated(effect) ? 'escalated' : effect.status === 'completed' ? 'done' : effect.status === 'released' ? 'released' : 'in_flight';
  return {
    key: effect.key,
    state,
    tool: effect.name,
    runId: effect.runId,
    turn: effect.turn,
    call: effect.call,
    ...(effect.sentAt !== undefined && { sentAt: effect.sentAt }),
    ...(effect.recordedAt !== undefined && { recordedAt: effect.recordedAt }),
    resolutions: effect.resolutions ?? [],
  };
}
