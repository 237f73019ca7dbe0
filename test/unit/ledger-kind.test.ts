import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { chooseLedger, ledgerKindOf } from '../../cli/state.js';

// Which ledger a state directory holds, and which one `savepoint run` uses on it.
describe('the ledger of a state directory', () => {
  const dirs: string[] = [];
  const stateDir = (...contents: ('ledger.jsonl' | 'ledger/')[]) => {
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-kind-'));
    dirs.push(dir);
    for (const entry of contents) entry.endsWith('/') ? mkdirSync(join(dir, entry)) : writeFileSync(join(dir, entry), '');
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('is embedded for a new directory, or the one asked for', () => {
    expect(chooseLedger(stateDir(), undefined)).toBe('embedded');
    expect(chooseLedger(stateDir(), 'dynalite')).toBe('dynalite');
    expect(chooseLedger(undefined, undefined)).toBe('embedded');
  });

  it('keeps a directory on the ledger it holds: a dynalite one stays dynalite without the flag', () => {
    expect(ledgerKindOf(stateDir('ledger/'))).toBe('dynalite');
    expect(chooseLedger(stateDir('ledger/'), undefined)).toBe('dynalite');
    expect(chooseLedger(stateDir('ledger.jsonl'), 'embedded')).toBe('embedded');
  });

  it('refuses another kind than the directory holds, naming the flag to pass', () => {
    expect(() => chooseLedger(stateDir('ledger/'), 'embedded')).toThrow(/holds a dynalite ledger: pass --ledger dynalite/);
  });

  it('names a directory that holds both', () => {
    expect(() => ledgerKindOf(stateDir('ledger/', 'ledger.jsonl'))).toThrow(/holds two ledgers/);
  });
});
