/** What a token knows of its execution: whether it still runs, and the token no Task has claimed yet. */
export interface TokenOwner {
    readonly status: string;
    /** A token read from $$.Task.Token that no Task has claimed yet (re-reads return the same one). */
    unclaimedToken?: string;
}
export interface PendingToken<Owner extends TokenOwner = TokenOwner, Value = unknown> {
    exec: Owner;
    promise: Promise<Value>;
    resolve: (output: Value) => void;
    reject: (error: Error) => void;
    /** Set while the task waits for its callback; restarts the HeartbeatSeconds timer. */
    heartbeat?: () => void;
}
export declare class TaskTokens<Owner extends TokenOwner, Value = unknown> {
    private readonly pending;
    /** Tokens whose task timed out, and their execution: kept while the engine keeps the execution (`forget`). */
    private readonly timedOut;
    sendTaskSuccess(token: string, output: string): void;
    sendTaskFailure(token: string, error?: string, cause?: string): void;
    sendTaskHeartbeat(token: string): void;
    /** The execution a live token belongs to (what a callback's authorization is decided on). */
    ownerOf(token: string): Owner;
    /** The pending entry of a token still waiting, if any. */
    get(token: string): PendingToken<Owner, Value> | undefined;
    /** Forgets a token (its task failed or completed); a late callback gets TaskDoesNotExist. */
    delete(token: string): void;
    /** Forgets a token whose task timed out: a late callback gets TaskTimedOut. */
    timeOut(token: string): void;
    /** The engine forgot `exec` (a finished execution past its retention): so are its timed-out tokens, which then get TaskDoesNotExist. */
    forget(exec: Owner): void;
    /** Backs `$$.Task.Token`: mints on first read, and registers the promise right away so a callback
     *  that arrives before the task starts waiting is not lost. */
    mint(exec: Owner): string;
    /** Runs synchronously inside the library's Parameters processing, before any other state can mint. */
    claim(exec: Owner, stateName: string, params: unknown): PendingToken<Owner, Value> & {
        token: string;
    };
    /** Rejects every token of an execution that has ended. */
    drop(exec: Owner, reason: Error): void;
    private live;
    private take;
}
