import { fdatasyncSync, fsyncSync } from 'node:fs';

/**
 * How the embedded ledger puts a file's writes on the disk: `data` (fdatasync: the contents and what
 * reading them needs) after an append or a head write, `full` (fsync, metadata too) after a file is
 * made or replaced. One place for every sync the ledger makes, so that what a power loss leaves can
 * be told from the syncs themselves (test/unit/durability.test.ts watches them here).
 */
export const fileSync = {
  data: (fd: number): void => fdatasyncSync(fd),
  full: (fd: number): void => fsyncSync(fd),
};
