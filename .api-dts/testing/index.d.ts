import { type RunReport } from '../lambdas/runs/report.js';
import { type AgentDefinition, type DevWorld } from '../lambdas/define.js';
import type { Ledger } from '../lambdas/ledger/ledger.js';
import type { ApprovalRecord } from '../lambdas/records/ledger-records.js';
import type { Clock, Timers } from '../lambdas/shared/ports.js';
import { CrashPoint, TOOL_CALL_BOUNDARIES, type CrashPoint as Boundary } from '../local/runtime/crash.js';
export { CrashPoint, TOOL_CALL_BOUNDARIES };
export type { ApprovalRecord, RunReport };
/**
 * A clock a test moves by hand (Temporal's time skipping): what the harness reads for deadlines,
 * leases and wall-clock budgets, and where its timers run — a tool's `timeoutMs`, the wall-clock
 * watch on a call in flight, lease renewals, the engine's Task timeouts. They fire as the clock
 * passes them, never in real time: a hung tool is timed out by `TestEnvironment.skip`, with no
 * real wait. `skip` moves it and runs what fell due. A write waiting out its tool's settle time
 * (a send of unknown outcome, reconciled no sooner) moves it by that much on its own.
 *
 * @example
 * ```ts
 * let called!: () => void;
 * const calling = new Promise<void>((resolve) => (called = resolve));
 * const lookup = defineTool({
 *   name: 'lookup', description: 'Never answers.', input: z.object({}), effect: 'read', timeoutMs: 30_000,
 *   execute: () => (called(), new Promise(() => {})),
 * });
 * const env = await createTestEnvironment({ agent: agentWith(lookup) });
 * const run = env.start({ id: 'o-1' });
 * await calling;
 * await env.skip(30_000); // its timeout fires: the model is told `timeout`, and the run goes on
 * expect((await run.result()).status).toBe('succeeded');
 * ```
 */
export declare class TestClock implements Clock, Timers {
    #private;
    constructor(start?: Date | string);
    readonly now: () => Date;
    /** Calls `fire` at the first `advance` that reaches `ms` from now (never between moves); returns the cancel. */
    readonly after: (ms: number, fire: () => void) => (() => void);
    /** Moves the clock forward (never back: time a run has seen cannot be undone), then fires the timers due by then, earliest first. */
    readonly advance: (ms: number) => void;
}
/**
 * Time skipping for the settle wait: each time an execution of `engine` enters WaitSettle (a send of
 * unknown outcome waiting out its tool's settle time), `advance` moves the clock by the seconds the
 * state waits — as that much time passes on AWS while it waits — so the run goes on at once rather
 * than in real seconds. Returns the unsubscribe.
 */
export declare function skipSettleWaits(engine: EngineEvents, advance: (ms: number) => void): () => void;
/**
 * What `skipSettleWaits` reads of an engine (a `LocalStack`'s or a `TestEnvironment`'s): its
 * history events as they happen. A shape of its own, so that the kit's public types do not reach
 * the local engine's (and through them the interpreter's, which a consumer need not install).
 */
export interface EngineEvents {
    on(listener: (event: {
        readonly type: string;
        readonly stateEnteredEventDetails?: {
            readonly name?: string;
            readonly input?: string;
        };
    }) => void): () => void;
}
/** How the environment answers each approval as it is requested; `undefined` leaves it pending. */
export type ApprovalAnswer = 'approve' | 'reject' | undefined;
export interface TestEnvironmentOptions<World extends DevWorld = DevWorld> {
    /** The agent, with its dev parts (`withDev`) unless `world` is given and its model is not `sim:`. */
    readonly agent: AgentDefinition<any, any, World>;
    /** Your own fakes, started by you (the environment closes them). @default the agent's `dev.world` */
    readonly world?: World;
    /** @default a new TestClock */
    readonly clock?: TestClock;
    /**
     * Answers approvals as they are requested, through the same approval API people use.
     * @default undefined: every approval waits for `decide`
     */
    readonly approve?: ApprovalAnswer | ((approval: ApprovalRecord) => ApprovalAnswer);
    /**
     * Where the ledger and the world keep their records: a run there survives a new environment on
     * the same directory (what `forEachCrashPoint` does). @default in memory
     */
    readonly stateDir?: string;
    /** Transient failures injected into model and provider requests. @default 0 */
    readonly failRate?: number;
    /** @default 1 */
    readonly seed?: number;
}
/** A finished run: how its execution ended and the ledger's report of it. */
export interface TestRun {
    readonly runId: string;
    /** The execution's status: `SUCCEEDED`, `FAILED`, `ABORTED`, `TIMED_OUT`. */
    readonly execution: string;
    /** The run's status in the ledger (`succeeded`, `escalated`, `failed`, `killed`, …). */
    readonly status: RunReport['status'];
    readonly report: RunReport;
}
export interface TestEnvironment<World extends DevWorld = DevWorld> {
    readonly agent: AgentDefinition<any, any, World>;
    readonly world: World;
    readonly clock: TestClock;
    readonly ledger: Ledger;
    /** Runs the agent on `input` until its execution stops (approvals answered by `approve`, or by `decide` meanwhile). */
    run(input: unknown, options?: {
        runId?: string;
    }): Promise<TestRun>;
    /** Starts a run and returns at once; `result()` waits for its end. */
    start(input: unknown, options?: {
        runId?: string;
    }): {
        runId: string;
        result(): Promise<TestRun>;
    };
    /** The approvals waiting for a person, oldest first. */
    pendingApprovals(): Promise<ApprovalRecord[]>;
    /** Resolves with the next approval requested (or one pending already). */
    nextApproval(): Promise<ApprovalRecord>;
    /** Decides an approval through the approval API, as a person would. */
    decide(approvalId: string, decision: 'approve' | 'reject', reason?: string): Promise<void>;
    /** Moves the clock forward and runs what fell due (approvals past their deadline expire). */
    skip(ms: number): Promise<void>;
    close(): Promise<void>;
}
/**
 * Starts a local test environment for an agent: the synthesized definition on the local engine,
 * the embedded ledger (in memory unless `stateDir`), the agent's simulated world or yours, and an
 * injected clock. Close it at the end of the test.
 */
export declare function createTestEnvironment<World extends DevWorld = DevWorld>(options: TestEnvironmentOptions<World>): Promise<TestEnvironment<World>>;
/** One case of the crash matrix: where the engine died, and the run the next engine finished. */
export interface CrashCase<World extends DevWorld = DevWorld> {
    readonly tool: string;
    readonly boundary: Boundary;
    /** The run, finished by a new engine on the same state (ledger and world) after the crash. */
    readonly run: TestRun;
    /** The world as the run left it: assert each side effect happened once. */
    readonly world: World;
}
/** What `forEachCrashPoint` takes: the environment's options (on a state directory of its own per case) and the matrix. */
export interface CrashMatrixOptions<World extends DevWorld = DevWorld> extends Omit<TestEnvironmentOptions<World>, 'stateDir' | 'world'> {
    readonly input: unknown;
    /** @default every `write` tool of the agent */
    readonly tools?: readonly string[];
    /** @default TOOL_CALL_BOUNDARIES */
    readonly boundaries?: readonly Boundary[];
    /**
     * Kill a real process: the dying engine is a `savepoint run` child process on this agent module
     * (a path from the working directory, or a file URL: the file the CLI loads, its dev module found beside it, as `npx savepoint run --agent` does),
     * ended with SIGKILL at the boundary by the CLI's `--crash-at`; the new engine resumes the run in
     * this process, on the same state directory. A side effect must then be visible across processes:
     * kept by the agent's world in its state directory (a journal, as a provider keeps its records),
     * not in this process's memory. The dead process ran on the system clock, so the new engine's
     * clock starts where its claims ran out (`clock` is refused), and `approve` is a fixed answer.
     * @default undefined: the engine dies in this process (nothing it would write or send after the boundary happens)
     */
    readonly kill?: {
        readonly agentModule: string | URL;
    };
    /** Called with each case, while its world is still open. */
    readonly check: (crash: CrashCase<World>) => void | Promise<void>;
}
/**
 * The crash matrix over your own write tools: for each tool and each boundary of its first call,
 * a fresh run whose engine dies there — every ledger write and outside call after that moment
 * never happens, as when a process is killed (or a real process is killed: `kill`) — and a new
 * engine on the same ledger and world resumes it to the end. `check` asserts what must hold (each
 * side effect once) on each case. The dying engine runs on a clock of its own from `clock`'s time
 * (on it, its invocations left in flight run out their function timeouts); `clock` then moves on
 * by the time it lived and a claim's lease, and the new engine runs on it.
 */
export declare function forEachCrashPoint<World extends DevWorld = DevWorld>(options: CrashMatrixOptions<World>): Promise<CrashCase<World>[]>;
