import { type EmbeddedLedgerOptions } from '../../lambdas/ledger/embedded-ledger.js';
import type { LedgerSealer } from '../../lambdas/ledger/seal.js';
import type { StorageLedger } from '../../lambdas/ledger/storage-ledger.js';
import type { CfnTemplateJson } from '../template/asl.js';
import { type LedgerKind } from '../state/ledger-files.js';
/**
 * The engine's ledger, and the endpoint other processes reach it by: the embedded ledger served
 * over loopback (`ledger`, lambdas/ledger/remote-ledger.ts), or dynalite's own port (`dynamodb`).
 */
export declare function openLocalLedger({ kind, stateDir, template, sealer, memory, }: {
    kind: LedgerKind;
    stateDir: string | undefined;
    template: CfnTemplateJson;
    sealer?: LedgerSealer | undefined;
    memory?: Pick<EmbeddedLedgerOptions, 'retainFinishedRuns' | 'retainEffects' | 'listedFinishedRuns'> | undefined;
}, closers: (() => Promise<void> | void)[]): Promise<{
    ledger: StorageLedger;
    endpoint: {
        ledger: string;
    } | {
        dynamodb: string;
    };
}>;
