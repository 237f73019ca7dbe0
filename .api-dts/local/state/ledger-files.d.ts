/**
 * Where each kind of local ledger lives in a state directory, and the DynamoDB ledger's table:
 * what a command that only reads a state directory (status, runs, approvals, …) needs to know of
 * the local runtime, in a module of its own so that those commands start without loading the
 * engine and the Step Functions interpreter (local/runtime/local-stack.ts).
 */
export type LedgerKind = 'embedded' | 'dynalite';
export declare const LEDGER_PATHS: {
    readonly embedded: 'ledger.jsonl';
    readonly dynalite: 'ledger';
};
export declare const LEDGER_TABLE = "savepoint-ledger";
