import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { savepoint } from '../support/cli-process.js';

/** `savepoint batch` refuses what it is given wrong before it asks anything: exit 2, one sentence naming the option. */
const root = mkdtempSync(join(tmpdir(), 'savepoint-batch-command-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const file = (name: string, text: string) => {
  const path = join(root, name);
  writeFileSync(path, text);
  return path;
};

describe('savepoint batch', () => {
  it.each([
    ['an items file that is not there', () => ['--items', join(root, 'missing.json')], /--items: .*missing\.json cannot be read: no such file or directory/],
    ['an items file that is not JSON', () => ['--items', file('broken.json', '[{')], /--items: .*broken\.json is not JSON/],
    ['an items file that holds no list', () => ['--items', file('object.json', '{"customer":"a"}')], /--items: .*object\.json holds no JSON array/],
    ['a concurrency that is no number', () => ['--items', file('ok.json', '[{"customer":"a"}]'), '--concurrency', 'many'], /--concurrency: expected a whole number in decimal digits, not "many"/],
    ['no engine to ask', () => ['--items', file('ok2.json', '[{"customer":"a"}]')], /stateDir: no savepoint engine serves .* start one with `savepoint serve/],
    ['neither items nor a manifest', () => [], /--items or --manifest: a batch has either a list of items or a manifest, one of the two/],
    ['both items and a manifest', () => ['--items', file('ok3.json', '[{"customer":"a"}]'), '--manifest', 's3://savepoint-local/a.json'], /--items or --manifest: a batch has either/],
    ['a manifest that is no S3 URL', () => ['--manifest', 'https://example.com/a.json'], /manifest: expected s3:\/\/<bucket>\/<key>/],
    ['a manifest with no key', () => ['--manifest', 's3://savepoint-local/'], /manifest: expected s3:\/\/<bucket>\/<key>/],
    ['a format it cannot read', () => ['--manifest', 's3://savepoint-local/a.parquet', '--format', 'parquet'], /format: Invalid option: expected one of "json"\|"csv"/],
    ['a format without a manifest', () => ['--items', file('ok4.json', '[{"customer":"a"}]'), '--format', 'csv'], /--format: it says how to read --manifest, and none was given/],
  ])('refuses %s (exit 2)', async (_what, args, message) => {
    const exit = await savepoint(['--state-dir', join(root, 'state'), 'batch', '--agent', 'batch-payer', ...args()]);
    expect(exit.code, exit.stdout).toBe(2);
    expect(exit.stderr).toMatch(message);
  });

  it('asks for the agent when none is named (exit 2)', async () => {
    const exit = await savepoint(['--state-dir', join(root, 'state'), 'batch', '--items', file('ok5.json', '[{"customer":"a"}]')], { env: { SAVEPOINT_AGENT: '' } });
    expect(exit.code, exit.stdout).toBe(2);
    expect(exit.stderr).toBe('savepoint: invalid options: --agent: name the agent: --agent <name|path> (or $SAVEPOINT_AGENT)\n');
  });
});
