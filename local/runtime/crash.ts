import { appendFileSync, writeSync } from 'node:fs';
import { z } from 'zod';
import type { MessageRequest, ModelClient } from '../../lambdas/records/messages.js';
import { handedOffTo } from '../../lambdas/guards/history.js';
import type { ApprovalLedger, Ledger, RunLedger, ToolCallLedger, TurnLedger } from '../../lambdas/ledger/ledger.js';
import { seededRandom } from '../../sim/random.js';
import type { ChildStarter } from '../../lambdas/tools/child-runs.js';

/**
 * The boundaries of a step where the process running it can die. The step code knows nothing of
 * them: the decorators below wrap the ledger and the model client from outside and announce each
 * boundary as the step crosses it; the injector can end the process there (a real SIGKILL), which
 * is how every boundary is proven recoverable.
 *
 *   CallTool          before-claim ─ claim ─ after-claim ─ provider call ─ after-commit ─ record ─ after-record ─ return ─ tool-returned
 *   CallModel         model call ─ model-call ─ record ─ model-recorded ─ return
 *   RequestApproval   store the pending approval ─ awaiting-approval ─ (the execution waits for a person)
 *   Handoff           record A→successor ─ handoff-recorded ─ StartExecution(successor) ─ return
 */
export const CrashPoint = {
  /** Nothing of this tool call is in the ledger yet. */
  BeforeClaim: 'before-claim',
  /** The call is claimed (in flight, leased); the outside system has not seen it. */
  AfterClaim: 'after-claim',
  /** The outside system answered — a refund is paid — but the ledger does not know: the unknown-outcome window. */
  AfterCommit: 'after-commit',
  /** The tool's outcome is recorded; the state machine has not heard back. */
  AfterRecord: 'after-record',
  /**
   * CallTool returned: whatever it recorded must be durable by now (on AWS the function may be
   * frozen or gone the moment it returns, and a write it did not wait for never lands).
   */
  ToolReturned: 'tool-returned',
  /** In the middle of a model call: the provider answered (and billed), the answer is not recorded. */
  ModelCall: 'model-call',
  /** The model's turn is recorded; the state machine has not heard back. */
  ModelRecorded: 'model-recorded',
  /** A pending approval is stored and the run waits for a person. */
  AwaitingApproval: 'awaiting-approval',
  /** An agent tool's child run was started (its wait's token stored first); the parent waits. Its tools: the child agent's name. */
  ChildStarted: 'child-started',
} as const;

/** One of the boundaries a crash may be injected at (`CrashPoint`'s values). */
export type CrashPoint = (typeof CrashPoint)[keyof typeof CrashPoint];
/** Every point a step announces (CRASH_POINTS plus the handoff's). */
export type AnyCrashPoint = CrashPoint | typeof HandoffRecorded;

/**
 * Continue-as-new: the run's chain names the successor; the successor has not been started. Kept
 * out of CRASH_POINTS (the refund crash matrix never reaches it); test/longruns aims at it.
 */
export const HandoffRecorded = 'handoff-recorded';
export const CRASH_POINTS = Object.values(CrashPoint);

/** The boundaries one side-effecting tool call meets, in order: the model asks for it, then it runs. */
export const TOOL_CALL_BOUNDARIES: readonly CrashPoint[] = [
  CrashPoint.ModelCall,
  CrashPoint.ModelRecorded,
  CrashPoint.BeforeClaim,
  CrashPoint.AfterClaim,
  CrashPoint.AfterCommit,
  CrashPoint.AfterRecord,
  CrashPoint.ToolReturned,
];

export interface CrashPoints {
  /** The step reached `point`; `tools` names the tool calls it concerns (for a model turn: the ones it asks for). */
  reached(point: AnyCrashPoint, tools: readonly string[]): void;
}

/**
 * Crash injection for the local engine: the process ends with SIGKILL at a step boundary — no
 * `finally`, no flush, no graceful close, exactly what a dead Lambda or a killed host leaves
 * behind. Off unless asked for (`savepoint run --crash-at … | --crash-rate …`).
 */

/** `<point>[:<tool>][:<nth>]`, e.g. `after-commit:issue_refund` or `model-call:3`. */
export const CrashAt = z
  .string()
  .transform((spec, ctx) => {
    const [point, ...rest] = spec.split(':');
    if (!(CRASH_POINTS as string[]).includes(point ?? '')) {
      ctx.addIssue({ code: 'custom', message: `unknown crash point "${point}"; expected one of ${CRASH_POINTS.join(', ')}` });
      return z.NEVER;
    }
    const nthText = rest.length > 0 && /^\d+$/.test(rest.at(-1)!) ? rest.pop()! : '1';
    if (rest.length > 1 || Number(nthText) < 1) {
      ctx.addIssue({ code: 'custom', message: `expected <point>[:<tool>][:<nth>] with nth ≥ 1, got "${spec}"` });
      return z.NEVER;
    }
    return { point: point as CrashPoint, tool: rest[0], nth: Number(nthText) };
  });
export type CrashAt = z.output<typeof CrashAt>;

export interface CrashOptions {
  /** Die the nth time this point is reached (for a tool, if given). */
  readonly at?: CrashAt;
  /** Die at any boundary with this probability. */
  readonly rate?: number;
  readonly seed?: number;
  /** A JSON line per crash is appended here before the process dies (the benchmark counts them). */
  readonly logFile?: string;
}

/** How the process dies. Tests of the injector itself pass their own. */
export type Die = (point: AnyCrashPoint, tools: readonly string[]) => never;

export const sigkill: Die = (point, tools) => {
  // Synchronous writes: nothing asynchronous runs after this line.
  writeSync(2, `savepoint: crash injected at ${point}${tools.length ? ` (${tools.join(', ')})` : ''}: SIGKILL\n`);
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: SIGKILL did not end the process');
};

export function crashInjector(options: CrashOptions, die: Die = sigkill): CrashPoints {
  const random = seededRandom(options.seed ?? 1);
  let seen = 0;
  return {
    reached(point, tools) {
      const { at, rate = 0 } = options;
      const targeted = at !== undefined && at.point === point && (at.tool === undefined || tools.includes(at.tool)) && ++seen === at.nth;
      // Drawn at every boundary, so a seed gives the same sequence of decisions.
      const drawn = rate > 0 && random() < rate;
      if (!targeted && !drawn) return;
      if (options.logFile) appendFileSync(options.logFile, `${JSON.stringify({ point, tools, at: new Date().toISOString(), pid: process.pid })}\n`);
      die(point, tools);
    },
  };
}

/**
 * The ledger as the steps see it, announcing the boundaries around each write that guards work.
 * Each role that has boundaries is wrapped on its own (`crashingToolCalls`, …); `crashingLedger`
 * puts the wrapped roles over a whole ledger and leaves its other methods as they are.
 */
export function crashingLedger(ledger: Ledger, crash: CrashPoints): Ledger {
  return decorate(ledger, {
    ...crashingToolCalls(ledger, crash),
    ...crashingTurns(ledger, crash),
    ...crashingRuns(ledger, crash),
    ...crashingApprovals(ledger, crash),
  });
}

/**
 * The tool calls:
 *
 *   claimCall:      before-claim ─ claim ─ after-claim
 *   completeCall:   after-commit (the outside call answered) ─ record ─ after-record
 *   recordCall:     after-commit (a read answered) ─ record ─ after-record
 */
export function crashingToolCalls(calls: ToolCallLedger, crash: CrashPoints): Pick<ToolCallLedger, 'claimCall' | 'completeCall' | 'recordCall'> {
  return {
    async claimCall(call, now, effect, basis) {
      crash.reached(CrashPoint.BeforeClaim, [call.name]);
      const claim = await calls.claimCall(call, now, effect, basis);
      if (claim.claimed) crash.reached(CrashPoint.AfterClaim, [call.name]);
      return claim;
    },
    async completeCall(completion) {
      const name = (await calls.getCall(completion.runId, completion.turn, completion.call))?.name;
      const tools = name ? [name] : [];
      crash.reached(CrashPoint.AfterCommit, tools);
      const completed = await calls.completeCall(completion);
      crash.reached(CrashPoint.AfterRecord, tools);
      return completed;
    },
    async recordCall(call, now, count, basis) {
      crash.reached(CrashPoint.AfterCommit, [call.name]);
      const recorded = await calls.recordCall(call, now, count, basis);
      crash.reached(CrashPoint.AfterRecord, [call.name]);
      return recorded;
    },
  };
}

/**
 * CallTool's function, announcing `tool-returned` as it returns, for the tool it called: a crash
 * there must find the call's record durable (a completion not awaited would be lost with it).
 */
export function crashingCallTool<F extends (input: unknown, signal?: AbortSignal) => Promise<unknown>>(callTool: F, crash: CrashPoints): F {
  return (async (input: unknown, signal?: AbortSignal) => {
    const result = await callTool(input, signal);
    const name = (result as { name?: unknown } | undefined)?.name;
    crash.reached(CrashPoint.ToolReturned, typeof name === 'string' ? [name] : []);
    return result;
  }) as F;
}

/** The model turns: recordTurn: record ─ model-recorded. */
export function crashingTurns(turns: TurnLedger, crash: CrashPoints): Pick<TurnLedger, 'recordTurn'> {
  return {
    async recordTurn(turn, count) {
      const recorded = await turns.recordTurn(turn, count);
      crash.reached(CrashPoint.ModelRecorded, toolNames(recorded.content));
      return recorded;
    },
  };
}

/** The runs: attachExecution of a handoff: record A→successor ─ handoff-recorded. */
export function crashingRuns(runs: RunLedger, crash: CrashPoints): Pick<RunLedger, 'attachExecution'> {
  return {
    async attachExecution(runId, executionArn, now, options) {
      const attached = await runs.attachExecution(runId, executionArn, now, options);
      // A handoff, not a resume: the new driver is the predecessor's successor by name.
      if (attached && options?.previousArn && handedOffTo(attached, options.previousArn) === executionArn) crash.reached(HandoffRecorded, []);
      return attached;
    },
  };
}

/** The approvals: upsertApproval: store the pending approval ─ awaiting-approval. */
export function crashingApprovals(approvals: ApprovalLedger, crash: CrashPoints): Pick<ApprovalLedger, 'upsertApproval'> {
  return {
    async upsertApproval(approval, taskToken) {
      const stored = await approvals.upsertApproval(approval, taskToken);
      if (stored.status === 'pending') crash.reached(CrashPoint.AwaitingApproval, [stored.toolName]);
      return stored;
    },
  };
}

/** `target` with `overrides` in place of some of its methods; the others bound to it. */
function decorate<T extends object>(target: T, overrides: Partial<T>): T {
  return new Proxy(target, {
    get(inner, property, receiver) {
      if (Object.hasOwn(overrides, property)) return overrides[property as keyof T];
      const value: unknown = Reflect.get(inner, property, receiver);
      return typeof value === 'function' ? value.bind(inner) : value;
    },
  });
}

/** The child runs' starter, announcing `child-started` (for the child agent) once StartExecution answered. */
export function crashingChildren(children: ChildStarter, crash: CrashPoints): ChildStarter {
  return {
    async start(agent, name, input) {
      await children.start(agent, name, input);
      crash.reached(CrashPoint.ChildStarted, [agent]);
    },
    stop: (agent, executionArn, cause) => children.stop(agent, executionArn, cause),
  };
}

/** The model client, announcing `model-call`: the provider answered (and billed), nothing is recorded yet. */
export function crashingModel(model: ModelClient, crash: CrashPoints): ModelClient {
  return {
    async createMessage(request: MessageRequest, signal?: AbortSignal) {
      const response = await model.createMessage(request, signal);
      crash.reached(CrashPoint.ModelCall, toolNames(response.content));
      return response;
    },
  };
}

function toolNames(content: readonly { type: string; name?: string }[]): string[] {
  return content.flatMap((block) => (block.type === 'tool_use' && block.name ? [block.name] : []));
}
