/**
 * Task tokens of `.waitForTaskToken` tasks: minted when the definition reads `$$.Task.Token`,
 * claimed by the Task whose Parameters carry it, completed by SendTaskSuccess / SendTaskFailure,
 * kept alive by SendTaskHeartbeat, and dropped when their execution ends. What the callbacks
 * refuse is AWS's rule (local/aws/sfn-task-tokens.ts).
 */
import { randomBytes } from 'node:crypto';
import { assertTokenLength, parseTaskOutput, taskGone } from '../aws/sfn-task-tokens.js';
import { TaskFailure, UncatchableError } from './errors.js';
import { containsString } from './payload.js';

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

export class TaskTokens<Owner extends TokenOwner, Value = unknown> {
  private readonly pending = new Map<string, PendingToken<Owner, Value>>();
  /** Tokens whose task timed out, and their execution: kept while the engine keeps the execution (`forget`). */
  private readonly timedOut = new Map<string, Owner>();

  sendTaskSuccess(token: string, output: string): void {
    const value = parseTaskOutput(output) as Value;
    this.take(token).resolve(value);
  }

  sendTaskFailure(token: string, error?: string, cause?: string): void {
    this.take(token).reject(new TaskFailure(error ?? '', cause ?? ''));
  }

  sendTaskHeartbeat(token: string): void {
    this.live(token).heartbeat?.();
  }

  /** The execution a live token belongs to (what a callback's authorization is decided on). */
  ownerOf(token: string): Owner {
    return this.live(token).exec;
  }

  /** The pending entry of a token still waiting, if any. */
  get(token: string): PendingToken<Owner, Value> | undefined {
    return this.pending.get(token);
  }

  /** Forgets a token (its task failed or completed); a late callback gets TaskDoesNotExist. */
  delete(token: string): void {
    this.pending.delete(token);
  }

  /** Forgets a token whose task timed out: a late callback gets TaskTimedOut. */
  timeOut(token: string): void {
    const pending = this.pending.get(token);
    this.pending.delete(token);
    if (pending) this.timedOut.set(token, pending.exec);
  }

  /** The engine forgot `exec` (a finished execution past its retention): so are its timed-out tokens, which then get TaskDoesNotExist. */
  forget(exec: Owner): void {
    for (const [token, owner] of this.timedOut) if (owner === exec) this.timedOut.delete(token);
  }

  /** Backs `$$.Task.Token`: mints on first read, and registers the promise right away so a callback
   *  that arrives before the task starts waiting is not lost. */
  mint(exec: Owner): string {
    if (exec.unclaimedToken) return exec.unclaimedToken;
    const token = 'AQ' + randomBytes(96).toString('base64url');
    if (exec.status !== 'RUNNING') return token; // never registered: any callback gets TaskDoesNotExist
    let resolve!: PendingToken<Owner, Value>['resolve'];
    let reject!: PendingToken<Owner, Value>['reject'];
    const promise = new Promise<Value>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    promise.catch(() => {}); // a token nobody awaits any more must not become an unhandled rejection
    this.pending.set(token, { exec, promise, resolve, reject });
    exec.unclaimedToken = token;
    return token;
  }

  /** Runs synchronously inside the library's Parameters processing, before any other state can mint. */
  claim(exec: Owner, stateName: string, params: unknown): PendingToken<Owner, Value> & { token: string } {
    const token = exec.unclaimedToken;
    const pending = token === undefined ? undefined : this.pending.get(token);
    if (token === undefined || !pending || !containsString(params, token)) {
      throw new UncatchableError('States.Runtime', `Task ${stateName} is .waitForTaskToken but its Parameters do not contain $$.Task.Token`);
    }
    exec.unclaimedToken = undefined;
    return { ...pending, token };
  }

  /** Rejects every token of an execution that has ended. */
  drop(exec: Owner, reason: Error): void {
    for (const [token, pending] of this.pending) {
      if (pending.exec !== exec) continue;
      this.pending.delete(token);
      pending.reject(reason);
    }
    exec.unclaimedToken = undefined;
  }

  private live(token: string): PendingToken<Owner, Value> {
    assertTokenLength(token);
    const pending = this.pending.get(token);
    if (pending && pending.exec.status === 'RUNNING') return pending;
    throw taskGone(this.timedOut.has(token));
  }

  private take(token: string): PendingToken<Owner, Value> {
    const pending = this.live(token);
    this.pending.delete(token);
    return pending;
  }
}
