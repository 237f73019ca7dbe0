import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EmbeddedLedger } from '../../lambdas/ledger/embedded-ledger.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';
import { describeLedgerContract } from './ledger.contract.js';

describeLedgerContract('embedded, in memory', async () => ({ ledger: EmbeddedLedger.open() }));

describeLedgerContract('embedded, on disk', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'savepoint-ledger-'));
  const ledger = EmbeddedLedger.open({ dir });
  return {
    ledger,
    close: () => {
      ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});

describeLedgerContract('embedded, on disk, reopened before every call', async () => {
  // Durability: every call runs on a ledger freshly replayed from the log, so a test passes only
  // if everything acknowledged before it survived a close and reopen.
  const dir = mkdtempSync(join(tmpdir(), 'savepoint-ledger-'));
  let current = EmbeddedLedger.open({ dir });
  const reopening = new Proxy({} as Ledger, {
    get: (_, method: keyof Ledger) => (...args: unknown[]) => {
      current.close();
      current = EmbeddedLedger.open({ dir });
      return (current[method] as (...args: unknown[]) => unknown)(...args);
    },
  });
  return {
    ledger: reopening,
    close: () => {
      current.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
