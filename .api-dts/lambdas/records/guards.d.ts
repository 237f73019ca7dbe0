/**
 * The budget guards as a table, one row per budget: what it is called, the run-config field that
 * holds its limit, how its figures are shown, whether a person may extend it, and how it is counted
 * and named in telemetry. The ledger (extensions), fork (a fresh budget), telemetry, the console
 * and the CLI read the rows instead of naming each budget field: a new budget is its `RunConfig`
 * field, its row and its test. The stop decision itself is guards/budgets.ts.
 */
/**
 * What a run has spent, as counted: the run record's counters, or a sum of its steps' deltas.
 * Dollars are micro-dollars, an integer, so that sums and differences stay exact.
 */
export interface Spent {
    readonly steps: number;
    readonly tokens: number;
    readonly micros: number;
}
/** Used and limit of one budget, in the limit's unit (the report's `guards`: guards/budgets.ts). */
export interface Figure {
    readonly used: number;
    readonly limit: number;
    /** The tokens budget only: `max_tokens` of each call. */
    readonly perTurn?: number;
}
export interface GuardRow {
    /** The guard's name: a `GuardEvent`'s guard, an extension's, and the key of the console's budgets. */
    readonly guard: 'steps' | 'tokens' | 'dollars' | 'wallClock';
    /** The run-config field holding its limit. */
    readonly field: 'maxSteps' | 'maxTokens' | 'maxDollars' | 'maxWallSeconds';
    /** The key of its figure in a run report's `guards`. */
    readonly figure: 'steps' | 'tokens' | 'dollars' | 'wallSeconds';
    /** As a person reads it: `wall clock`. */
    readonly label: string;
    /** A value in a stop reason or an approval's summary: `0.0321`, `60 s`. */
    show(value: number): string;
    /** Its line in the CLI's report: used / limit. */
    report(figure: Figure): string;
    /** Whether a person may extend it (the run's `onBudgetExceeded: 'ask'`). */
    readonly extendable: boolean;
    /**
     * How it is counted, for the budgets that count steps' work (the wall clock is measured instead):
     * what was spent in units of `1 / scale` of the limit, and its name in the telemetry attributes
     * `savepoint.budget.used.<name>` and `savepoint.budget.remaining.<name>`.
     */
    readonly counted?: {
        readonly spent: (spent: Spent) => number;
        readonly scale: number;
        readonly telemetry: string;
    };
}
/**
 * Dollars as a stop reason shows them: cents, and the micro-dollars beyond when there are any, so
 * that $0.0321 spent of $0.03 reads `0.0321 / 0.03`, not `0.03 / 0.03`.
 */
export declare function usd(dollars: number): string;
export declare const GUARDS: readonly [{
    readonly guard: 'steps';
    readonly field: 'maxSteps';
    readonly figure: 'steps';
    readonly label: 'steps';
    readonly show: StringConstructor;
    readonly report: (f: Figure) => string;
    readonly extendable: true;
    readonly counted: {
        readonly spent: (s: Spent) => number;
        readonly scale: 1;
        readonly telemetry: 'steps';
    };
}, {
    readonly guard: 'tokens';
    readonly field: 'maxTokens';
    readonly figure: 'tokens';
    readonly label: 'tokens';
    readonly show: StringConstructor;
    readonly report: (f: Figure) => string;
    readonly extendable: true;
    readonly counted: {
        readonly spent: (s: Spent) => number;
        readonly scale: 1;
        readonly telemetry: 'tokens';
    };
}, {
    readonly guard: 'dollars';
    readonly field: 'maxDollars';
    readonly figure: 'dollars';
    readonly label: 'dollars';
    readonly show: typeof usd;
    readonly report: (f: Figure) => string;
    readonly extendable: true;
    readonly counted: {
        readonly spent: (s: Spent) => number;
        readonly scale: 1000000;
        readonly telemetry: 'usd';
    };
}, {
    readonly guard: 'wallClock';
    readonly field: 'maxWallSeconds';
    readonly figure: 'wallSeconds';
    readonly label: 'wall clock';
    readonly show: (seconds: number) => string;
    readonly report: (f: Figure) => string;
    readonly extendable: true;
}];
export type BudgetGuard = (typeof GUARDS)[number]['guard'];
/** The counted budgets (steps, tokens, dollars): each with how it is counted. */
export declare const COUNTED_GUARDS: readonly (GuardRow & {
    readonly counted: NonNullable<GuardRow['counted']>;
})[];
/** A counted budget's spent, in the limit's unit: dollars from micro-dollars. */
export declare const spentOf: (row: (typeof COUNTED_GUARDS)[number], spent: Spent) => number;
/** What is left of a counted budget, computed in its counting unit so that dollars stay exact. */
export declare const remainingOf: (row: (typeof COUNTED_GUARDS)[number], limit: number, spent: Spent) => number;
