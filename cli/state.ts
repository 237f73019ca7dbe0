import { copyFileSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { DynamoDbLedger } from '../lambdas/ledger/dynamodb-ledger.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import { parseOrThrow } from '../lambdas/shared/validation.js';
import { localAwsConfig } from '../local/aws-config.js';
import { startDynamo } from '../local/dynamo.js';
import type { CfnTemplateJson } from '../local/asl.js';
import { LEDGER_TABLE } from '../local/runtime.js';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export const DEFAULT_STATE_DIR = '.savepoint';

/**
 * While `savepoint run` drives the local engine it owns the state directory (only one process may
 * open the on-disk DynamoDB) and publishes its loopback endpoints here; other commands reach it
 * through them, or open the state directory themselves when no engine runs.
 */
const EngineFile = z.object({
  pid: z.number().int(),
  startedAt: z.string(),
  /** The agent the engine runs (its name, and the module it was loaded from). */
  agent: z.object({ name: z.string(), module: z.string() }),
  endpoints: z.object({ dynamodb: z.string(), sfn: z.string(), approvals: z.string(), model: z.string() }).catchall(z.string()),
});
export type EngineFile = z.infer<typeof EngineFile>;

const engineFilePath = (stateDir: string) => join(stateDir, 'engine.json');

export function publishEngine(stateDir: string, engine: EngineFile): () => void {
  const path = engineFilePath(stateDir);
  writeFileSync(path, JSON.stringify(engine, null, 2));
  return () => rmSync(path, { force: true });
}

/** The engine running on this state directory, if its process is alive. */
export function runningEngine(stateDir: string): EngineFile | undefined {
  const path = engineFilePath(stateDir);
  if (!existsSync(path)) return undefined;
  const engine = EngineFile.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!engine.success) return undefined;
  try {
    process.kill(engine.data.pid, 0);
    return engine.data;
  } catch {
    return undefined; // left behind by a process that died
  }
}

/** The ledger of a state directory: through the running engine's endpoint, or opened directly. */
export async function openLedger(stateDir: string): Promise<{ ledger: Ledger; close: () => Promise<void> }> {
  const engine = runningEngine(stateDir);
  if (engine) {
    const client = new DynamoDBClient({ ...localAwsConfig, endpoint: engine.endpoints.dynamodb });
    return { ledger: new DynamoDbLedger(client, LEDGER_TABLE), close: async () => client.destroy() };
  }
  if (!existsSync(join(stateDir, 'ledger'))) {
    throw new Error(`no ledger in ${resolve(stateDir)}: run \`savepoint run\` first (or pass --state-dir)`);
  }
  const dynamo = await startDynamo({ path: join(stateDir, 'ledger') });
  return { ledger: new DynamoDbLedger(dynamo.client, LEDGER_TABLE), close: dynamo.close };
}

/**
 * The data file the agent's simulated world serves (e.g. the refund reconciler's day) is part of a
 * state directory's outside world, like the world's journal next to it: a run keeps a copy there,
 * and a resume without `--world-data` serves the same data again.
 */
export function worldDataOf(stateDir: string | undefined, explicit: string | undefined): { path: string | undefined; keep: () => void } {
  const kept = stateDir && join(stateDir, 'world-data.json');
  const path = explicit ?? (kept && existsSync(kept) ? kept : undefined);
  return { path, keep: () => kept && path && path !== kept && copyFileSync(path, kept) };
}

/** A synthesized CloudFormation template, as `cdk synth` writes it. */
export function loadTemplate(path: string): CfnTemplateJson {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as CfnTemplateJson;
  } catch (error) {
    throw new Error(`cannot read the template ${path}: ${(error as Error).message}`);
  }
}
