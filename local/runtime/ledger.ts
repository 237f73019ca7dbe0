import { join } from 'node:path';
import { EmbeddedLedger, type EmbeddedLedgerOptions } from '../../lambdas/ledger/embedded-ledger.js';
import { serveLedger } from '../../lambdas/ledger/remote-ledger.js';
import type { LedgerSealer } from '../../lambdas/ledger/seal.js';
import type { StorageLedger } from '../../lambdas/ledger/storage-ledger.js';
import { localLedgerSealer } from '../state/approval-keys.js';
import type { CfnTemplateJson } from '../template/asl.js';
import { LEDGER_PATHS, LEDGER_TABLE, type LedgerKind } from '../state/ledger-files.js';
import { ledgerTableFromTemplate } from '../template/synthesize.js';
import type { DynamoDbLostAnswers, LostAnswerCounts } from '../aws/dynamodb-lost-answers.js';

/**
 * The engine's ledger, and the endpoint other processes reach it by: the embedded ledger served
 * over loopback (`ledger`, lambdas/ledger/remote-ledger.ts), or dynalite's own port (`dynamodb`).
 */
export async function openLocalLedger(
  {
    kind,
    stateDir,
    template,
    sealer,
    memory = {},
    fsync = false,
    lostAnswers,
  }: {
    kind: LedgerKind;
    stateDir: string | undefined;
    template: CfnTemplateJson;
    sealer?: LedgerSealer | undefined;
    memory?: Pick<EmbeddedLedgerOptions, 'retainFinishedRuns' | 'retainEffects' | 'listedFinishedRuns'> | undefined;
    /** fdatasync the log and its head before a write is acknowledged (`durability: 'sync'`). */
    fsync?: boolean;
    /** DynamoDB answers lost after their writes committed (local/aws/dynamodb-lost-answers.ts): the DynamoDB ledger only (the local stack refuses it with any other ledger, before it starts). */
    lostAnswers?: DynamoDbLostAnswers | undefined;
  },
  closers: (() => Promise<void> | void)[],
): Promise<{ ledger: StorageLedger; endpoint: { ledger: string } | { dynamodb: string }; lostAnswers?: LostAnswerCounts }> {
  if (kind === 'embedded') {
    const embedded = EmbeddedLedger.open({ dir: stateDir, ...(sealer && { sealer }), ...memory, fsync });
    closers.push(() => embedded.close());
    const served = await serveLedger(embedded);
    closers.push(served.close);
    return { ledger: embedded, endpoint: { ledger: served.url } };
  }
  // Loaded only for this ledger: the emulator and the DynamoDB SDK are ~40 MB an embedded run does not need.
  const [{ ensureTable, startDynamo }, { DynamoDbLedger }] = await Promise.all([import('../services/dynamodb.js'), import('../../lambdas/ledger/dynamodb-ledger.js')]);
  const dynamo = await startDynamo({ path: stateDir && join(stateDir, LEDGER_PATHS.dynalite), ...(lostAnswers && { lostAnswers }) });
  closers.push(dynamo.close);
  await ensureTable(dynamo.client, ledgerTableFromTemplate(template as never, LEDGER_TABLE));
  return { ledger: new DynamoDbLedger(dynamo.client, LEDGER_TABLE, sealer ?? localLedgerSealer(stateDir)), endpoint: { dynamodb: dynamo.endpoint }, ...(dynamo.lostAnswers && { lostAnswers: dynamo.lostAnswers }) };
}
