import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { BreakerState } from '../guards/breaker.js';
import { AppendLog } from './append-log.js';
import { checkStepWant, type ApprovalDecision, type AttachOptions, type Ledger, type StepRead, type StepWant } from './ledger.js';
import { LockFile } from './lock-file.js';
import { hmacSealer, ephemeralSealer, readOrCreateKeyFile, type LedgerSealer } from './seal.js';
import { LedgerIntegrityError } from '../shared/errors.js';
import {
  approvalSkOf,
  BUDGET_FIELDS,
  budgetApprovalSk,
  callSk,
  runKey,
  tokenKey,
  turnSk,
  type ApprovalRecord,
  type Counters,
  type ExtendableGuard,
  type GuardEvent,
  type KillFlag,
  type RecoveryRecord,
  type RunRecord,
  type RunStatus,
  type ToolCallRecord,
  type ToolOutcome,
  type TurnRecord,
} from './records.js';

export interface EmbeddedLedgerOptions {
  /** Directory the ledger persists to (created if needed; one process at a time). @default in memory */
  readonly dir?: string;
  /** fdatasync after every write, to survive an OS crash too (see `AppendLogOptions.fsync`). @default false */
  readonly fsync?: boolean;
  /**
   * Compact on open when the log holds more than `ratio` times the bytes of the live state, and at
   * least `minBytes`. @default { ratio: 4, minBytes: 1 MiB }
   */
  readonly compaction?: { readonly ratio: number; readonly minBytes: number };
  /** Notes on what opening did (a torn line dropped, a stale lock taken over, a compaction). @default console.warn */
  readonly onNote?: (note: string) => void;
  /**
   * Seals every item and the log's chain (lambdas/ledger/seal.ts). @default in memory: a random
   * key; on disk: the key file `keys/ledger-seal.key` in `dir` (made on first use)
   */
  readonly sealer?: LedgerSealer;
}

/** The seal key's file in a state directory (`keys/`, like the approval keys). */
export const SEAL_KEY_FILE = 'keys/ledger-seal.key';

/** The error a failed condition raises where the DynamoDB ledger would raise ConditionalCheckFailedException. */
export class ConditionalWriteError extends Error {
  override readonly name = 'ConditionalCheckFailedException';
  constructor(what: string) {
    super(`The conditional request failed: ${what}`);
  }
}

type Key = { pk: string; sk: string };

/** Attributes the DynamoDB ledger keeps on an item but never returns; here, beside the record. */
interface Hidden {
  /** Step keys counted into a run's counters (countStep). */
  countedSteps?: string[];
  /** Reasons of the guard events recorded on a run (recordGuardEvent). */
  guardReasons?: string[];
  /** In the pending-approvals index (a sparse GSI on DynamoDB). */
  pendingApproval?: true;
}

/**
 * One stored item. `json` is the record as written (what the log holds; like DynamoDB's
 * marshalling, it drops `undefined`); `record` is parsed from it, for the conditions to read. The
 * record is never handed out or changed: every read returns a deep copy.
 */
interface Item<T = unknown> {
  readonly record: T;
  readonly json: string;
  readonly hidden: Hidden;
  /** The item's seal (over its key, record and hidden attributes). */
  readonly seal: string;
}

interface LogEntry extends Key {
  record: unknown;
  hidden?: Hidden;
  seal: string;
  /** The log chain: MAC of this line (without `chain`) and the chain of the line before it. */
  chain: string;
  /** The line as it was read, without its `chain` (what the chain covers). */
  body: string;
}

const RUN_SK = runKey('').sk;
const GLOBAL_KILL: Key = { pk: 'GLOBAL', sk: 'KILL' };
const breakerKey = (name: string): Key => ({ pk: `BREAKER#${name}`, sk: 'BREAKER' });
const turnKey = (runId: string, turn: number): Key => ({ pk: runKey(runId).pk, sk: turnSk(turn) });
const callKey = (runId: string, turn: number, call: number): Key => ({ pk: runKey(runId).pk, sk: callSk(turn, call) });
const approvalKey = (approval: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>): Key => ({
  pk: runKey(approval.runId).pk,
  sk: approvalSkOf(approval),
});

/**
 * The ledger in this process: the same items, keys and conditions as the DynamoDB ledger, kept
 * in a Map per partition, optionally persisted to an append-only log.
 *
 * The conditional-write protocol. Every guarded write is one synchronous section, with no
 * `await` between reading the item and replacing it:
 *
 *   read item ─► check the condition (the one the DynamoDB ledger sends) ─► build the new item
 *     ─► append it to the log (disk) ─► replace it in the Map ─► return
 *
 * Node runs one synchronous section at a time, so in one process each write is atomic like a
 * single-item conditional write: of 50 concurrent claims, the first runs to completion and the
 * other 49 find its record. The log is appended before the Map changes, so what a caller saw
 * acknowledged is on disk, and a write that failed to reach the disk changed nothing.
 *
 * Records are opaque: stored as given (as JSON), read back as copies. Only the keys and the fields
 * a condition reads (a run's executionArn, recovery, killed, budgetExtensions; a call's status,
 * leaseUntil, attempts; an approval's status, approvalId, decideBy) have meaning here.
 */
export class EmbeddedLedger implements Ledger {
  private readonly partitions = new Map<string, Partition>();
  /** approvalId → item key (the byApprovalId GSI). */
  private readonly approvalsById = new Map<string, Key>();
  /** The pending approvals (the pendingApprovals GSI), by `pk|sk`. */
  private readonly pending = new Map<string, Key>();
  private closed = false;

  /** The chain of the last line of the log (`''` for an empty log). */
  private tip = '';

  private constructor(
    private readonly sealer: LedgerSealer,
    private readonly log?: AppendLog<LogEntry>,
    private readonly lock?: LockFile,
    private readonly head?: LogHead,
  ) {}

  /** Opens the ledger in memory, or on disk in `options.dir` (replaying, and maybe compacting, its log). */
  static open(options: EmbeddedLedgerOptions = {}): EmbeddedLedger {
    if (options.dir === undefined) return new EmbeddedLedger(options.sealer ?? ephemeralSealer());
    const dir = options.dir;
    const onNote = options.onNote ?? ((note: string) => console.warn(`savepoint ledger: ${note}`));
    mkdirSync(dir, { recursive: true });
    const lock = LockFile.acquire(join(dir, 'ledger.lock'), onNote);
    let log: AppendLog<LogEntry> | undefined;
    let head: LogHead | undefined;
    try {
      const logPath = join(dir, 'ledger.jsonl');
      const keyPath = join(dir, SEAL_KEY_FILE);
      // A ledger that was kept here and is gone must not start over as if nothing happened: its
      // head, or the seal key made with it, is the evidence that it existed.
      const keyExisted = existsSync(keyPath);
      const sealer = options.sealer ?? hmacSealer(readOrCreateKeyFile(keyPath));
      head = LogHead.open(join(dir, 'ledger.head'));
      if (!existsSync(logPath) && (head.lines > 0 || (keyExisted && options.sealer === undefined && !head.existed))) {
        throw new LedgerIntegrityError(
          { record: logPath },
          head.lines > 0
            ? `the file is missing, but ${head.path} records ${head.lines} lines of it (the ledger was deleted)`
            : `the file is missing, but the seal key ${keyPath} shows that a ledger was kept in ${dir} (the ledger was deleted)`,
        );
      }
      let entries: LogEntry[];
      let tip = '';
      const accept = (read: readonly unknown[]) => (tip = verifyLog(read as LogEntry[], head!, sealer, logPath));
      ({ log, entries } = AppendLog.open(logPath, parseEntry, { fsync: options.fsync, onNote, accept }));
      const ledger = new EmbeddedLedger(sealer, log, lock, head);
      ledger.load(entries, tip);
      ledger.compactIfLarge(options.compaction ?? { ratio: 4, minBytes: 1 << 20 }, onNote);
      return ledger;
    } catch (error) {
      log?.close();
      head?.close();
      lock.release();
      throw error;
    }
  }

  /** Loads the entries of a verified log (`verifyLog`), and brings its head up to date. */
  private load(entries: LogEntry[], tip: string): void {
    for (const entry of entries) this.set(entry, item(entry.record, entry.hidden ?? {}, entry.seal));
    this.tip = tip;
    if (this.head!.needsWrite(entries.length, tip, this.sealer)) this.head!.write(entries.length, tip, this.sealer);
  }

  /** Closes the log and releases the directory; the ledger cannot be used afterwards. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.log?.close();
    this.head?.close();
    this.lock?.release();
  }

  // ── runs ────────────────────────────────────────────────────────────────────────────────

  async createRun(run: RunRecord): Promise<boolean> {
    const key = runKey(run.runId);
    if (this.get(key)) return false;
    this.store(key, run);
    return true;
  }

  async getRun(runId: string): Promise<RunRecord | undefined> {
    return this.read(runKey(runId));
  }

  // Every record here was verified when the log was opened: no run to name to `onDamaged`.
  async listRuns(limit = 100): Promise<RunRecord[]> {
    const runs: Item<RunRecord>[] = [];
    for (const partition of this.partitions.values()) {
      const run = partition.items.get(RUN_SK) as Item<RunRecord> | undefined;
      if (run) runs.push(run);
    }
    return runs
      .sort((a, b) => b.record.createdAt.localeCompare(a.record.createdAt))
      .slice(0, limit)
      .map(copy);
  }

  async attachExecution(
    runId: string,
    executionArn: string,
    now: Date,
    options: AttachOptions = {},
  ): Promise<RunRecord | undefined> {
    const key = runKey(runId);
    const current = this.get<RunRecord>(key);
    if (!current || (options.previousArn !== undefined && current.record.executionArn !== options.previousArn)) {
      if (options.previousArn !== undefined) return undefined;
      throw new ConditionalWriteError(`attachExecution: no run ${runId}`);
    }
    const { finishedAt: _finished, stopReason: _reason, error: _error, ...run } = current.record;
    return this.write(
      key,
      {
        ...run,
        executionArn,
        executions: [...(run.executions ?? []), executionArn],
        status: 'running',
        updatedAt: now.toISOString(),
        ...(options.fingerprint !== undefined && { fingerprint: options.fingerprint }),
        ...(options.definitionHash !== undefined && { definitionHash: options.definitionHash }),
        ...(options.migration && { migrations: [...(run.migrations ?? []), options.migration] }),
        ...(options.migration?.to.version !== undefined && { agentVersion: options.migration.to.version }),
      },
      current.hidden,
    );
  }

  async recordRecovery(runId: string, recovery: RecoveryRecord, expected: { executionArn: string; previousKey?: string }): Promise<boolean> {
    const key = runKey(runId);
    const current = this.get<RunRecord>(key);
    if (!current || current.record.executionArn !== expected.executionArn) return false;
    // The run's recovery record is its own lock (see the DynamoDB ledger).
    if (current.record.recovery?.key !== expected.previousKey) return false;
    this.store(key, { ...current.record, recovery, updatedAt: recovery.at }, current.hidden);
    return true;
  }

  async finishRun(
    runId: string,
    outcome: { status: Exclude<RunStatus, 'running'>; stopReason?: string; error?: { error: string; cause: string } },
    now: Date,
  ): Promise<RunRecord> {
    const key = runKey(runId);
    const current = this.get<RunRecord>(key);
    if (!current) throw new ConditionalWriteError(`finishRun: no run ${runId}`);
    const at = now.toISOString();
    return this.write(
      key,
      {
        ...current.record,
        status: outcome.status,
        updatedAt: at,
        finishedAt: at,
        ...(outcome.stopReason !== undefined && { stopReason: outcome.stopReason }),
        ...(outcome.error !== undefined && { error: outcome.error }),
      },
      current.hidden,
    );
  }

  async killRun(runId: string, flag: KillFlag): Promise<boolean> {
    const key = runKey(runId);
    const current = this.get<RunRecord>(key);
    if (!current) return false;
    if (current.record.killed === undefined) this.write(key, { ...current.record, killed: flag }, current.hidden);
    return true;
  }

  async getGlobalKill(): Promise<KillFlag | undefined> {
    return this.read<{ flag?: KillFlag }>(GLOBAL_KILL)?.flag;
  }

  async setGlobalKill(flag: KillFlag | undefined): Promise<void> {
    this.store(GLOBAL_KILL, { kind: 'kill', ...(flag && { flag }) });
  }

  async recordGuardEvent(runId: string, event: GuardEvent): Promise<void> {
    const key = runKey(runId);
    const current = this.get<RunRecord>(key);
    const reasons = current?.hidden.guardReasons ?? [];
    if (!current || reasons.includes(event.reason)) return;
    this.store(
      key,
      { ...current.record, guardEvents: [...(current.record.guardEvents ?? []), event] },
      { ...current.hidden, guardReasons: [...reasons, event.reason] },
    );
  }

  async countStep(runId: string, stepKey: string, deltas: Partial<Counters>): Promise<boolean> {
    const key = runKey(runId);
    const current = this.get<RunRecord>(key);
    const counted = current?.hidden.countedSteps ?? [];
    if (!current || counted.includes(stepKey)) return false;
    const run: Record<string, unknown> = { ...current.record };
    for (const [name, delta] of Object.entries(deltas)) {
      if (delta) run[name] = ((run[name] as number | undefined) ?? 0) + delta;
    }
    this.store(key, run, { ...current.hidden, countedSteps: [...counted, stepKey] });
    return true;
  }

  async applyBudgetExtension(runId: string, guard: ExtendableGuard, extension: number, limit: number): Promise<RunRecord> {
    const key = runKey(runId);
    const current = this.get<RunRecord>(key);
    if (!current) throw new Error(`no run ${runId}`);
    const run = current.record;
    // Only a later extension of this budget applies: a repeated or stale one changes nothing.
    const applied = run.budgetExtensions?.[guard];
    if (applied !== undefined && applied >= extension) return copy(current);
    return this.write(
      key,
      { ...run, config: { ...run.config, [BUDGET_FIELDS[guard]]: limit }, budgetExtensions: { ...run.budgetExtensions, [guard]: extension } },
      current.hidden,
    );
  }

  // ── the provider breakers (BreakerStore) ────────────────────────────────────────────────

  async getBreaker(name: string): Promise<BreakerState | undefined> {
    return this.read(breakerKey(name));
  }

  async saveBreaker(next: BreakerState): Promise<boolean> {
    const key = breakerKey(next.name);
    const current = this.get<BreakerState>(key);
    // Optimistic: the version read must still be there (version 1 may also create the breaker).
    if (current ? current.record.version !== next.version - 1 : next.version !== 1) return false;
    this.store(key, next);
    return true;
  }

  // ── turns and tool calls ────────────────────────────────────────────────────────────────

  async recordTurn(turn: TurnRecord): Promise<TurnRecord> {
    const key = turnKey(turn.runId, turn.turn);
    const first = this.get<TurnRecord>(key);
    return first ? copy(first) : this.write(key, turn);
  }

  async getTurn(runId: string, turn: number): Promise<TurnRecord | undefined> {
    return this.read(turnKey(runId, turn));
  }

  async listConversation(
    runId: string,
    options: { fromTurn?: number } = {},
  ): Promise<{ turns: TurnRecord[]; calls: ToolCallRecord[]; approvals: ApprovalRecord[] }> {
    const conversation = { turns: [] as TurnRecord[], calls: [] as ToolCallRecord[], approvals: [] as ApprovalRecord[] };
    const from = options.fromTurn === undefined ? undefined : turnSk(options.fromTurn);
    // Sort-key order, as a DynamoDB query returns the partition: TURN#0001, TURN#0001#CALL#01, …
    for (const [sk, stored] of this.partitions.get(runKey(runId).pk)?.sorted() ?? []) {
      if (from !== undefined && sk < from) continue;
      const kind = (stored.record as { kind?: string }).kind;
      if (kind === 'turn') conversation.turns.push(copy(stored as Item<TurnRecord>));
      else if (kind === 'tool') conversation.calls.push(copy(stored as Item<ToolCallRecord>));
      else if (kind === 'approval') conversation.approvals.push(copy(stored as Item<ApprovalRecord>));
    }
    return conversation;
  }

  async getCall(runId: string, turn: number, call: number): Promise<ToolCallRecord | undefined> {
    return this.read(callKey(runId, turn, call));
  }

  async loadStep(runId: string, want: StepWant = {}): Promise<StepRead> {
    checkStepWant(want);
    const found = <T>(records: (T | undefined)[]) => records.filter((record): record is T => record !== undefined);
    const globalKill = this.read<{ flag?: KillFlag }>(GLOBAL_KILL)?.flag;
    const breaker = want.breaker === undefined ? undefined : this.read<BreakerState>(breakerKey(want.breaker));
    return {
      ...optional('run', this.read<RunRecord>(runKey(runId))),
      ...optional('globalKill', globalKill),
      turns: found((want.turns ?? []).map((turn) => this.read<TurnRecord>(turnKey(runId, turn)))),
      calls: found((want.calls ?? []).map(({ turn, call }) => this.read<ToolCallRecord>(callKey(runId, turn, call)))),
      ...optional('breaker', breaker),
    };
  }

  async recordCall(
    call: ToolCallRecord & { status: 'completed' },
    now: Date,
  ): Promise<{ recorded: true; record: ToolCallRecord } | { recorded: false; existing: ToolCallRecord }> {
    const key = callKey(call.runId, call.turn, call.call);
    const current = this.get<ToolCallRecord>(key);
    // The condition of claimCall: no record, or an in-flight one whose holder's lease expired.
    if (current && !(current.record.status === 'in_flight' && current.record.leaseUntil < now.toISOString())) {
      return { recorded: false, existing: copy(current) };
    }
    const record = this.write<ToolCallRecord>(key, { ...current?.record, ...call, attempts: (current?.record.attempts ?? 0) + 1 });
    return { recorded: true, record };
  }

  async claimCall(
    call: ToolCallRecord,
    now: Date,
  ): Promise<{ claimed: true; record: ToolCallRecord } | { claimed: false; existing: ToolCallRecord }> {
    const key = callKey(call.runId, call.turn, call.call);
    const current = this.get<ToolCallRecord>(key);
    // Claimable when there is no record, or when its holder's lease expired while in flight.
    if (current && !(current.record.status === 'in_flight' && current.record.leaseUntil < now.toISOString())) {
      return { claimed: false, existing: copy(current) };
    }
    const record = this.write<ToolCallRecord>(key, { ...current?.record, ...call, status: 'in_flight', attempts: (current?.record.attempts ?? 0) + 1 });
    return { claimed: true, record };
  }

  async completeCall(
    runId: string,
    turn: number,
    call: number,
    outcome: { outcome: ToolOutcome; result: string; latencyMs: number },
    now: Date,
  ): Promise<ToolCallRecord> {
    const key = callKey(runId, turn, call);
    const current = this.get<ToolCallRecord>(key);
    if (current?.record.status !== 'in_flight') throw new ConditionalWriteError(`completeCall: call ${key.sk} of run ${runId} is not in flight`);
    return this.write(key, { ...current.record, ...outcome, status: 'completed', recordedAt: now.toISOString() });
  }

  async releaseCall(runId: string, turn: number, call: number, now: Date): Promise<void> {
    const key = callKey(runId, turn, call);
    const current = this.get<ToolCallRecord>(key);
    if (current?.record.status === 'in_flight') this.write(key, { ...current.record, leaseUntil: now.toISOString() });
  }

  // ── approvals ───────────────────────────────────────────────────────────────────────────

  async upsertApproval(approval: ApprovalRecord, taskToken: string): Promise<ApprovalRecord> {
    const key = approvalKey(approval);
    const current = this.get<ApprovalRecord>(key);
    // A retried or resumed request carries a new task token: a pending approval must wake the
    // execution that waits now. A decided one keeps its decision (and the token it was decided on).
    if (current && current.record.status !== 'pending') return copy(current);
    this.store(tokenKey(approval), { taskToken });
    return current ? copy(current) : this.write(key, approval, { pendingApproval: true });
  }

  async getTaskToken(key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>): Promise<string | undefined> {
    return this.read<{ taskToken: string }>(tokenKey(key))?.taskToken;
  }

  async getApproval(runId: string, turn: number, call: number): Promise<ApprovalRecord | undefined> {
    return this.read(approvalKey({ runId, turn, call }));
  }

  async getBudgetApproval(runId: string, guard: ExtendableGuard, extension: number): Promise<ApprovalRecord | undefined> {
    return this.read({ pk: runKey(runId).pk, sk: budgetApprovalSk(guard, extension) });
  }

  async findApproval(approvalId: string): Promise<ApprovalRecord | undefined> {
    const key = this.approvalsById.get(approvalId);
    return key && this.read(key);
  }

  async listPendingApprovals(): Promise<ApprovalRecord[]> {
    // Sorted like the index: by decideBy (then by key, so that ties come out the same every time).
    return [...this.pending]
      .map(([id, key]) => ({ id, stored: this.get<ApprovalRecord>(key)! }))
      .sort((a, b) => a.stored.record.decideBy.localeCompare(b.stored.record.decideBy) || a.id.localeCompare(b.id))
      .map(({ stored }) => copy(stored));
  }

  async decideApproval(
    key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>,
    decision: ApprovalDecision,
    now: Date,
  ): Promise<{ decided: boolean; record: ApprovalRecord }> {
    const itemKey = approvalKey(key);
    const current = this.get<ApprovalRecord>(itemKey);
    if (!current) throw new Error(`no approval for call ${key.turn}/${key.call} of run ${key.runId}`);
    if (current.record.status !== 'pending') return { decided: false, record: copy(current) };
    const { pendingApproval: _pending, ...hidden } = current.hidden;
    const { linkId, reason, status, decidedBy, decidedVia, decisionMac, waitedMs } = decision;
    const fields = { status, decidedBy, ...(decidedVia && { decidedVia }), ...(decisionMac && { decisionMac }), ...(waitedMs !== undefined && { waitedMs }) };
    const usedLinks = linkId ? [...(current.record.usedLinks ?? []), linkId] : current.record.usedLinks;
    const record = this.write(
      itemKey,
      { ...current.record, ...fields, reason: reason ?? '', decidedAt: now.toISOString(), ...(usedLinks && { usedLinks }) },
      hidden,
    );
    return { decided: true, record };
  }

  async recordFirstApproval(
    key: Pick<ApprovalRecord, 'runId' | 'turn' | 'call' | 'budget'>,
    first: NonNullable<ApprovalRecord['firstApproval']>,
    linkId?: string,
  ): Promise<{ recorded: boolean; record: ApprovalRecord }> {
    const itemKey = approvalKey(key);
    const current = this.get<ApprovalRecord>(itemKey);
    if (!current) throw new Error(`no approval for call ${key.turn}/${key.call} of run ${key.runId}`);
    if (current.record.status !== 'pending' || current.record.firstApproval) return { recorded: false, record: copy(current) };
    const usedLinks = linkId ? [...(current.record.usedLinks ?? []), linkId] : current.record.usedLinks;
    const record = this.write(itemKey, { ...current.record, firstApproval: first, ...(usedLinks && { usedLinks }) }, current.hidden);
    return { recorded: true, record };
  }

  // ── storage ─────────────────────────────────────────────────────────────────────────────

  private get<T>(key: Key): Item<T> | undefined {
    if (this.closed) throw new Error('the ledger is closed');
    return this.partitions.get(key.pk)?.items.get(key.sk) as Item<T> | undefined;
  }

  private read<T>(key: Key): T | undefined {
    const stored = this.get<T>(key);
    return stored && copy(stored);
  }

  /** Commits one write (log first, then memory) and returns a copy of the stored record. */
  private write<T>(key: Key, record: T, hidden: Hidden = {}): T {
    return copy(this.store(key, record, hidden));
  }

  /** Commits one write (log first, then memory): for the writers that return nothing, no copy is made. */
  private store<T>(key: Key, record: T, hidden: Hidden = {}): Item<T> {
    if (this.closed) throw new Error('the ledger is closed');
    // One serialization: the stored record is parsed from the text the log line carries.
    const text = JSON.stringify(record);
    const json = JSON.parse(text) as T;
    // The seal protects a record at rest: in memory there is no rest (nothing outside this process
    // holds the item, and it dies with it), so only a ledger with a log seals what it writes.
    const stored: Item<T> = { record: json, json: text, hidden, seal: this.log ? this.sealer.seal(key, { ...(json as object), ...hidden }) : '' };
    if (this.log) {
      const body = line(key, stored);
      const chain = this.sealer.chain(this.tip, body);
      this.log.append(chained(body, chain));
      this.tip = chain;
      this.head!.write(this.log.lines, chain, this.sealer);
    }
    this.set(key, stored);
    return stored;
  }

  /** Puts an item in memory, and keeps the two approval indexes in step with it. */
  private set(key: Key, stored: Item): void {
    let partition = this.partitions.get(key.pk);
    if (!partition) this.partitions.set(key.pk, (partition = new Partition()));
    partition.put(key.sk, stored);
    const { approvalId } = stored.record as { approvalId?: unknown };
    if (typeof approvalId === 'string') this.approvalsById.set(approvalId, key);
    if (stored.hidden.pendingApproval) this.pending.set(`${key.pk}|${key.sk}`, key);
    else this.pending.delete(`${key.pk}|${key.sk}`);
  }

  private compactIfLarge(threshold: { ratio: number; minBytes: number }, onNote: (note: string) => void): void {
    if (!this.log || this.log.bytes < threshold.minBytes) return;
    const lines: string[] = [];
    let live = 0;
    let tip = '';
    for (const [pk, partition] of this.partitions) {
      for (const [sk, stored] of partition.items) {
        const body = line({ pk, sk }, stored);
        tip = this.sealer.chain(tip, body);
        const text = chained(body, tip);
        lines.push(text);
        live += Buffer.byteLength(text) + 1;
      }
    }
    if (this.log.bytes <= threshold.ratio * live) return;
    const before = this.log.bytes;
    // The head names both logs while the new one replaces the old: a crash in between leaves a
    // head that matches whichever of the two is on disk.
    const head = this.head!;
    head.write(lines.length, tip, this.sealer, { lines: head.lines, chain: this.tip });
    this.log.rewrite(lines);
    this.tip = tip;
    head.write(lines.length, tip, this.sealer);
    onNote(`${this.log.path}: compacted ${before} bytes of log to ${this.log.bytes} bytes of live state`);
  }

  // ── large values by reference (ledger/blobs.ts): the DynamoDB ledger's keys ──────────────

  async putBlob(runId: string, digest: string, chunks: readonly string[]): Promise<void> {
    chunks.forEach((data, index) => {
      this.store({ pk: `BLOB#${runId}`, sk: `${digest}#${String(index).padStart(5, '0')}` }, { kind: 'blob', data });
    });
  }

  async getBlob(runId: string, digest: string): Promise<string[]> {
    if (this.closed) throw new Error('the ledger is closed');
    const prefix = `${digest}#`;
    return (this.partitions.get(`BLOB#${runId}`)?.sorted() ?? [])
      .filter(([sk]) => sk.startsWith(prefix))
      .map(([, stored]) => String((stored.record as { data?: unknown }).data));
  }

  // ── the runs marked running ─────────────────────────────────────────────────────────────

  /** Every record here was verified when the log was opened: there is no damaged run to name. */
  async listRunningRuns(): Promise<RunRecord[]> {
    return (await this.listRuns(Number.MAX_SAFE_INTEGER)).filter((run) => run.status === 'running');
  }
}

/**
 * Verifies a log before it is loaded: each line's chain and each item's seal, and that the log
 * holds every line its head counts. A flipped byte, a reordered, forged or lost line fails, naming
 * the file, the line and the record. Returns the chain's tip.
 */
function verifyLog(entries: LogEntry[], head: LogHead, sealer: LedgerSealer, path: string): string {
  const chains = [''];
  entries.forEach((entry, index) => {
    if (sealer.chain(chains[index]!, entry.body) !== entry.chain) {
      throw new LedgerIntegrityError(
        { record: `${path}:${index + 1} (${entry.pk}/${entry.sk})` },
        'the line does not follow from the lines before it (altered, reordered or forged)',
      );
    }
    chains.push(entry.chain);
    sealer.verify(entry, { ...(entry.record as object), ...(entry.hidden ?? {}) }, entry.seal);
  });
  const lines = entries.length;
  // One line more than the head counts: the process died between appending a line and counting it.
  const matched = (count: number) => count >= 0 && head.matches(count, chains[count]!, sealer);
  if (!(!head.existed && lines === 0) && !matched(lines) && !matched(lines - 1)) {
    throw new LedgerIntegrityError(
      { record: path },
      !head.existed
        ? `the file holds ${lines} lines, but its head ${head.path} is missing`
        : lines < head.lines
          ? `the file holds ${lines} complete lines, but ${head.path} records ${head.lines}: ${head.lines - lines} were lost (truncated)`
          : `the file's ${lines} lines do not match ${head.path} (${head.lines} lines; one of the two was altered or replaced)`,
    );
  }
  return chains[lines]!;
}

/** The items of one partition, and their sort-key order (computed when a query needs it). */
class Partition {
  readonly items = new Map<string, Item>();
  private order?: [string, Item][];

  put(sk: string, stored: Item): void {
    if (!this.items.has(sk)) this.order = undefined;
    else if (this.order) this.order.find((entry) => entry[0] === sk)![1] = stored;
    this.items.set(sk, stored);
  }

  sorted(): [string, Item][] {
    // Plain code-unit order: for the ASCII keys of records.ts, the byte order DynamoDB sorts by.
    this.order ??= [...this.items.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)).map((sk) => [sk, this.items.get(sk)!]);
    return this.order;
  }
}

/** `{ [name]: value }`, or nothing when the value is undefined (a record read back has no undefined fields). */
function optional<K extends string, V>(name: K, value: V | undefined): { [key in K]?: V } {
  return (value === undefined ? {} : { [name]: value }) as { [key in K]?: V };
}

function item<T>(record: T, hidden: Hidden, seal: string): Item<T> {
  return { record, json: JSON.stringify(record), hidden, seal };
}

/** A fresh copy of a stored record (for listConversation's hundreds of records, ~5× faster than parsing its JSON). */
function copy<T>(stored: Item<T>): T {
  return cloneJson(stored.record) as T;
}

/** Deep-copies a value parsed from JSON: plain objects, arrays and primitives only. */
function cloneJson(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map(cloneJson);
  const clone: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const field = cloneJson((value as Record<string, unknown>)[key]);
    // An own "__proto__" key (JSON allows it) must stay a key, not become the prototype.
    if (key === '__proto__') Object.defineProperty(clone, key, { value: field, enumerable: true, writable: true, configurable: true });
    else clone[key] = field;
  }
  return clone;
}

function line(key: Key, stored: Item): string {
  const hidden = Object.keys(stored.hidden).length > 0 ? `,"hidden":${JSON.stringify(stored.hidden)}` : '';
  return `{"pk":${JSON.stringify(key.pk)},"sk":${JSON.stringify(key.sk)},"record":${stored.json}${hidden},"seal":${JSON.stringify(stored.seal)}}`;
}

const CHAIN = ',"chain":"';
/** The head's fixed width (its longest form, mid-compaction, is ~250 bytes). */
const HEAD_BYTES = 400;

/** A line with its chain MAC as the last field (so that the chained body is the line's own text). */
function chained(body: string, chain: string): string {
  return `${body.slice(0, -1)}${CHAIN}${chain}"}`;
}

function parseEntry(value: unknown, text: string): LogEntry {
  const entry = value as Partial<LogEntry> | null;
  if (typeof entry?.pk !== 'string' || typeof entry.sk !== 'string' || typeof entry.record !== 'object' || entry.record === null) {
    throw new Error('expected {"pk": string, "sk": string, "record": object}');
  }
  if (entry.hidden !== undefined && (typeof entry.hidden !== 'object' || entry.hidden === null)) throw new Error('"hidden" must be an object');
  const at = text.lastIndexOf(CHAIN);
  if (typeof entry.seal !== 'string' || typeof entry.chain !== 'string' || at < 0) {
    throw new LedgerIntegrityError({ record: `${entry.pk}/${entry.sk}` }, 'the line carries no seal and chain (written without the ledger key)');
  }
  return { ...(entry as LogEntry), body: `${text.slice(0, at)}}` };
}

/**
 * The log's head, `ledger.head` beside it: how many lines the log holds and the chain of the last
 * one, MACed. Rewritten in place after every append (one small write at offset 0); without it, a
 * log cut at a line boundary would replay as a shorter, valid-looking history.
 */
class LogHead {
  private constructor(
    readonly path: string,
    /** Opened on the first write: a ledger refused on open leaves no head behind. */
    private fd: number | undefined,
    readonly existed: boolean,
    private state: { lines: number; chain: string; mac: string; previous?: { lines: number; chain: string } },
  ) {}

  static open(path: string): LogHead {
    const text = existsSync(path) ? readFileSync(path, 'utf8').trim() : '';
    // An empty head: the process died between creating it and its first write (nothing was logged yet).
    const existed = text !== '';
    let state = { lines: 0, chain: '', mac: '' } as LogHead['state'];
    if (text !== '') {
      try {
        state = JSON.parse(text) as LogHead['state'];
        if (!Number.isInteger(state.lines) || typeof state.chain !== 'string' || typeof state.mac !== 'string') throw new Error('bad shape');
      } catch {
        throw new LedgerIntegrityError({ record: path }, 'the file is not a ledger head (expected {"lines", "chain", "mac"})');
      }
    }
    return new LogHead(path, existed ? openSync(path, 'r+') : undefined, existed, state);
  }

  get lines(): number {
    return this.state.lines;
  }

  /** Whether the head must be rewritten for a log of `lines` lines ending in `chain` (new, one line behind, or mid-compaction). */
  needsWrite(lines: number, chain: string, sealer: LedgerSealer): boolean {
    return !this.existed || this.state.previous !== undefined || !this.matches(lines, chain, sealer) || this.state.lines !== lines;
  }

  /** Whether the log's chain after `lines` lines is what the head (or, mid-compaction, its previous log) records. */
  matches(lines: number, chain: string, sealer: LedgerSealer): boolean {
    const { previous } = this.state;
    if (sealer.chain(this.state.chain, `head ${this.state.lines}${previous ? ` ${previous.lines} ${previous.chain}` : ''}`) !== this.state.mac) return false;
    return (lines === this.state.lines && chain === this.state.chain) || (previous !== undefined && lines === previous.lines && chain === previous.chain);
  }

  write(lines: number, chain: string, sealer: LedgerSealer, previous?: { lines: number; chain: string }): void {
    const mac = sealer.chain(chain, `head ${lines}${previous ? ` ${previous.lines} ${previous.chain}` : ''}`);
    this.state = { lines, chain, mac, ...(previous && { previous }) };
    // Padded to a fixed width, so that a shorter head never leaves the end of a longer one behind.
    const text = JSON.stringify(this.state).padEnd(HEAD_BYTES - 1, ' ');
    this.fd ??= openSync(this.path, 'w+', 0o600);
    writeSync(this.fd, `${text}\n`, 0);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
  }
}
