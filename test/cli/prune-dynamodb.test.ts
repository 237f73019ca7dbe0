import { execFile, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSampleDay } from '../../agents/refund-reconciler/make-sample-day.js';
import { startDynamo } from '../../local/services/dynamodb.js';
import { LEDGER_PATHS, LEDGER_TABLE } from '../../local/state/ledger-files.js';
import { duplicates, providerJournal, savepoint, workspace } from '../support/cli-process.js';
import { duplicatePayments, startHarness, type Harness } from '../support/refund-harness.js';
import { serveStack, stackSealer, type ServedStack } from '../support/served-stack.js';
import { documentClient } from '../support/document-client.js';
import { startServe } from '../support/serve-process.js';

/**
 * `savepoint prune --finished-before <date>` on the DynamoDB ledger (issue 26, item 9): a state
 * directory's on dynalite, and a deployed stack's (`--stack`, the real SDK pointed at the local
 * engine), each CLI command its own process.
 */
const day = makeSampleDay(5, { plain: 1, already_refunded: 0, mismatch: 1, large: 0 });

interface Pruned {
  pruned: { runIds: string[]; records: number; digest: string; prunedAt: string }[];
}
interface Verified {
  ok: boolean;
  pruned: { records: { runIds: string[] }[]; problems: string[] };
}

describe('savepoint prune on a state directory with the DynamoDB ledger (dynalite)', () => {
  const children = new Set<ChildProcess>();
  afterAll(() => {
    for (const child of children) child.kill('SIGKILL');
  });

  it('removes a finished run under a sealed record verify checks, keeps its effect (a repeat is not paid), and names an altered record', { timeout: 300_000 }, async () => {
    const { stateDir, args } = await workspace('prune-dynalite', day);
    const cli = (...more: string[]) => savepoint(['--state-dir', stateDir, ...more]);
    const first = await savepoint(args('run', '--ledger', 'dynalite', '--run-id', 'day-a', '--json'));
    expect(first.code, first.stderr).toBe(0);
    const paid = providerJournal(stateDir).filter((entry) => entry.kind === 'refund');
    expect(paid).toHaveLength(1);

    const pruning = await cli('prune', '--finished-before', '2999-01-01', '--json');
    expect(pruning.code, pruning.stderr).toBe(0);
    const { pruned } = JSON.parse(pruning.stdout) as Pruned;
    expect(pruned).toMatchObject([{ runIds: ['day-a'], digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) }]);
    expect(pruned[0]!.records).toBeGreaterThan(5);

    const status = await cli('status', 'day-a');
    expect(status.code).not.toBe(0);
    expect(status.stderr).toMatch(/no run day-a/);
    const verified = await cli('verify', '--all', '--json');
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, pruned: { records: [{ runIds: ['day-a'] }], problems: [] } } satisfies Verified);
    expect((await cli('verify', 'day-a')).stdout).toMatch(/^day-a: pruned, its records removed by pruned at \S+: 1 run that finished before 2999-01-01T00:00:00\.000Z \(\d+ records, sha256:[0-9a-f]{64}\), sealed\n$/);

    // The same day again under another run id: the refund's business-key effect outlived the pruned run, so it is not paid twice.
    const second = await savepoint(args('run', '--run-id', 'day-b', '--json'));
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ status: 'succeeded' });
    expect(providerJournal(stateDir).filter((entry) => entry.kind === 'refund')).toEqual(paid);
    expect(duplicates(stateDir)).toEqual([]);

    // Beside a running engine (serve) a prune goes ahead on this ledger (conditional deletes), but the engine appends to the
    // directory's history.jsonl: the file is kept as it is (its later lines would be lost under a rewrite), and the prune says so.
    const history = readFileSync(join(stateDir, 'history.jsonl'), 'utf8');
    const serving = await startServe(['--state-dir', stateDir, 'serve', '--agent', 'refund-reconciler'], children);
    const beside = await cli('prune', '--finished-before', '2999-01-01', '--json');
    expect(beside.code, beside.stderr).toBe(0);
    expect(JSON.parse(beside.stdout)).toMatchObject({ pruned: [{ runIds: ['day-b'] }], historyLinesRemoved: 0, historyKept: [stateDir] });
    expect(readFileSync(join(stateDir, 'history.jsonl'), 'utf8').startsWith(history)).toBe(true);
    serving.child.kill('SIGTERM');
    expect(await serving.exited).toBe(0);

    // The prune record, altered in the table (what someone with table access could do): verify names it and fails.
    const dynamo = await startDynamo({ path: join(stateDir, LEDGER_PATHS.dynalite) });
    try {
      const doc = documentClient(dynamo);
      const [record] = (await doc.send(new QueryCommand({ TableName: LEDGER_TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'PRUNED' } }))).Items ?? [];
      await doc.send(new PutCommand({ TableName: LEDGER_TABLE, Item: { ...record, runIds: ['day-z'] } }));
    } finally {
      await dynamo.close();
    }
    const tampered = await cli('verify', '--all');
    expect(tampered.code).toBe(1);
    expect(tampered.stdout).toMatch(/FAILED: ledger integrity: record PRUNED\/PRUNE#\S+ fails verification: its seal does not match/);
  });
});

describe('savepoint --stack prune (a deployed stack)', () => {
  const exec = promisify(execFile);
  const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;
  let harness: Harness;
  let served: ServedStack;
  beforeAll(async () => {
    harness = await startHarness({ ledger: 'dynalite', sealer: stackSealer(), day });
    served = await serveStack(harness);
  }, 120_000);
  afterAll(async () => {
    await served?.close();
    await harness?.stack.close();
  });
  const stack = async (...args: string[]) => {
    try {
      const { stdout, stderr } = await exec(process.execPath, [bin, '--stack', 'Savepoint', ...args], { env: served.env, timeout: 60_000 });
      return { code: 0, stdout, stderr };
    } catch (error) {
      return error as { code: number; stdout: string; stderr: string };
    }
  };

  it('prunes a finished run from the stack\'s table, and verify --all accounts for it', { timeout: 300_000 }, async () => {
    const started = await stack('run', '--agent', 'refund-reconciler', '--run-id', 'stack-prune', '--input', JSON.stringify({ date: day.date }), '--json');
    expect(started.code, started.stderr).toBe(0);
    await harness.stack.engine.waitForExecution((JSON.parse(started.stdout) as { executionArn: string }).executionArn);
    expect(await harness.stack.ledger.getRun('stack-prune')).toMatchObject({ status: 'succeeded' });

    const pruning = await stack('prune', '--finished-before', '2999-01-01', '--json');
    expect(pruning.code, pruning.stderr).toBe(0);
    expect((JSON.parse(pruning.stdout) as Pruned).pruned).toMatchObject([{ runIds: ['stack-prune'] }]);
    expect(await harness.stack.ledger.getRun('stack-prune')).toBeUndefined();
    const verified = await stack('verify', '--all', '--json');
    expect(verified.code, verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true, pruned: { records: [{ runIds: ['stack-prune'] }], problems: [] } });
    expect(duplicatePayments(harness.stack)).toEqual([]);
  });
});
