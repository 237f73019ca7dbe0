import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineAgent, defineTool, withDev, type ModelPolicy } from '../../lambdas/index.js';
import { createTestEnvironment, forEachCrashPoint, TestClock, TOOL_CALL_BOUNDARIES, type CrashCase, type TestEnvironment } from '../../testing/index.js';
import journalNotes from './fixtures/journal-notes.dev.js';
import journalMail from './fixtures/journal-mail.dev.js';
import type { NotesWorld } from './fixtures/journal-notes.dev.js';
import { oneTurnPolicy } from '../support/one-turn-policy.js';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';

/**
 * savepoint/testing on a small agent whose write tool counts what it was asked to do: the kit's
 * promises (runs to the end, approvals decided or expired on the injected clock, the crash matrix
 * with each side effect once) checked against what the tool saw, here, without a pack.
 */
const sent = new Map<string, number>();
const calls: string[] = [];

const agent = defineAgent({
  name: 'kit-notes',
  model: 'sim:savepoint-sim-1',
  system: 'Save one note.',
  input: z.object({ urgent: z.boolean() }).strict(),
  prompt: (input) => `Save the note${input.urgent ? ' (urgent)' : ''}.`,
  tools: [
    defineTool({
      name: 'save_note',
      description: 'Saves a note.',
      input: z.object({ urgent: z.boolean() }).strict(),
      effect: 'write',
      idempotencyKeys: true,
      needsApproval: (args) => (args.urgent ? { summary: 'an urgent note' } : undefined),
      execute: async (_args, { idempotencyKey }) => {
        calls.push(idempotencyKey);
        sent.set(idempotencyKey, (sent.get(idempotencyKey) ?? 0) + 1);
        return { saved: true };
      },
    }),
  ],
});

/** Saves the note, then ends. */
const savesNote: ModelPolicy = (request) => {
  const turns = request.messages.filter((message) => message.role === 'assistant').length;
  const urgent = JSON.stringify(request.messages[0]).includes('(urgent)');
  if (turns === 0) return { content: [{ type: 'tool_use', id: 'call_1', name: 'save_note', input: { urgent } }], stop_reason: 'tool_use' };
  return { content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn' };
};
const dev = withDev(agent, { policy: savesNote });

let env: TestEnvironment | undefined;
afterEach(async () => {
  await env?.close();
  env = undefined;
  sent.clear();
  calls.length = 0;
});

describe('savepoint/testing', () => {
  it('runs an agent to the end on the local engine', async () => {
    env = await createTestEnvironment({ agent: dev });
    const run = await env.run({ urgent: false });
    expect(run).toMatchObject({ execution: 'SUCCEEDED', status: 'succeeded' });
    expect([...sent.values()]).toEqual([1]);
  });

  it('waits for a decision, then runs the approved call once', async () => {
    env = await createTestEnvironment({ agent: dev });
    const run = env.start({ urgent: true });
    const approval = await env.nextApproval();
    expect(approval.summary).toContain('an urgent note');
    expect(sent.size).toBe(0);
    await env.decide(approval.approvalId, 'approve');
    expect((await run.result()).report.approvals).toMatchObject({ approved: 1 });
    expect([...sent.values()]).toEqual([1]);
  });

  it('hands each approval out once: two calls of nextApproval take a turn\'s two approvals', async () => {
    const twoUrgent = withDev(agent, {
      policy: oneTurnPolicy([{ id: 'call_1', name: 'save_note', input: { urgent: true } }, { id: 'call_2', name: 'save_note', input: { urgent: true } }], () => undefined),
    });
    env = await createTestEnvironment({ agent: twoUrgent });
    const run = env.start({ urgent: true });
    const first = await env.nextApproval();
    const second = await env.nextApproval();
    expect([first.call, second.call].sort()).toEqual([1, 2]);
    await env.decide(first.approvalId, 'approve');
    await env.decide(second.approvalId, 'approve');
    expect((await run.result()).report.approvals).toMatchObject({ approved: 2 });
    expect([...sent.values()]).toEqual([1, 1]);
    await expect(env.nextApproval()).rejects.toThrow('nextApproval: no run of this environment is going');
  });

  it('says why a run did not start (the input the agent refuses), and that no approval can come once no run is going', async () => {
    env = await createTestEnvironment({ agent: dev });
    await expect(env.nextApproval()).rejects.toThrow('nextApproval: no run of this environment is going, and none asked for an approval');
    await expect(env.run({ urgent: 'yes' })).rejects.toThrow(
      'run test-kit-notes-1 did not start (execution FAILED): Agent.InvalidInput: invalid input of agent kit-notes: urgent: Invalid input: expected boolean, received string',
    );
    // A run that asks for nothing: the wait ends with it, not with the test's timeout.
    const run = env.start({ urgent: false });
    await expect(env.nextApproval()).rejects.toThrow('nextApproval: no run of this environment is going, and none asked for an approval');
    expect((await run.result()).status).toBe('succeeded');
  });

  it('refuses a run id the runs API would refuse, or one already used, by a rejection that names it', async () => {
    env = await createTestEnvironment({ agent: dev });
    // `run` rejects (never throws at the call), naming the option, as the runs API answers 400.
    const badId = env.run({ urgent: false }, { runId: 'notes/2026 01' });
    await expect(badId).rejects.toThrow('run "notes/2026 01" did not start: runId: expected 1-80 letters, digits, "-" or "_" (it names the execution)');
    expect(() => env!.start({ urgent: false }, { runId: 'a.b' })).toThrow('run "a.b" did not start: runId: expected 1-80 letters');
    expect(await env.ledger.getRun('a.b')).toBeUndefined();
    // The same run id again, once its run has ended: said, naming the run, and nothing runs twice.
    expect((await env.run({ urgent: false }, { runId: 'once' })).status).toBe('succeeded');
    await expect(env.run({ urgent: false }, { runId: 'once' })).rejects.toThrow(/^run once did not start: Execution Already Exists/);
    expect([...sent.values()]).toEqual([1]);
  });

  it('says when a crash matrix\'s run waits for a person that `approve` does not answer, rather than waiting for the test\'s timeout', async () => {
    const waits = /^forEachCrashPoint: run crash-save_note-(before-claim|model-call) waits for a person \(approval of save_note: "an urgent note \(run crash-save_note-\1\)"\), which nobody can decide in a crash matrix: pass approve: 'approve' or 'reject'/;
    const checked: string[] = [];
    const check = (crash: CrashCase) => void checked.push(crash.boundary);
    // Asked before the engine dies (the claim comes after the approval) …
    await expect(forEachCrashPoint({ agent: dev, input: { urgent: true }, boundaries: ['before-claim'], check })).rejects.toThrow(waits);
    // … or by the engine that resumes the run (the first died at the model call, before asking).
    await expect(forEachCrashPoint({ agent: dev, input: { urgent: true }, boundaries: ['model-call'], approve: () => undefined, check })).rejects.toThrow(waits);
    expect(checked).toEqual([]);
    expect(sent.size).toBe(0);
  });

  it('waits for a run that hands off (continue-as-new) to end on its last execution, and takes a run\'s config', async () => {
    env = await createTestEnvironment({ agent: dev });
    // The smallest handoff threshold the run config allows: the run goes on in a successor execution.
    const run = await env.run({ urgent: false }, { runId: 'handed-off', config: { historyEventsBeforeHandoff: 50 } });
    const record = await env.ledger.getRun('handed-off');
    expect(record?.executionArn).toMatch(/:handed-off-c\d+$/);
    expect(run).toMatchObject({ execution: 'SUCCEEDED', status: 'succeeded' });
    expect([...sent.values()]).toEqual([1]);
  });

  it("waits for the automatic recovery of a run whose execution failed, and answers the run's end after it (given up, when the model stays down)", async () => {
    // The model provider fails every request after the first (its policy throws: a 500).
    let requests = 0;
    const down = withDev(agent, {
      policy: (request) => {
        requests += 1;
        if (request.messages.some((message) => message.role === 'assistant')) throw new Error('the provider is down');
        return savesNote(request);
      },
    });
    env = await createTestEnvironment({ agent: down });
    // Not the first execution's failure (RecoverRun resumes the run at once), but the run's end: given up after three recoveries.
    const run = await env.run({ urgent: false }, { runId: 'down' });
    expect(run).toMatchObject({ execution: 'FAILED', status: 'failed', report: { stopReason: expect.stringMatching(/^not recovered: 3 recoveries in a row made no progress \(stuck at step 2\); last: execution down-recovery-3 FAILED/) } });
    expect(await env.ledger.getRun('down')).toMatchObject({ status: 'failed', error: { error: 'Agent.Unrecoverable' }, executions: [expect.stringMatching(/:down$/), expect.stringMatching(/:down-recovery-1$/), expect.stringMatching(/:down-recovery-2$/), expect.stringMatching(/:down-recovery-3$/)] });
    expect([...sent.values()]).toEqual([1]);
    expect(requests).toBeGreaterThan(2);
  });

  it("rides out injected failures (failRate) as on AWS: a Retry's backoff moves the clock, so a breaker the failures opened cools down and the run finishes, each refund paid once", async () => {
    for (const seed of [1, 2, 3]) {
      const refunds = await createTestEnvironment({ agent: refundReconciler, failRate: 0.3, seed, approve: 'approve' });
      try {
        const started = refunds.clock.now().getTime();
        const run = await refunds.run({ date: '2026-11-28' });
        expect(run, `seed ${seed}: ${run.report.stopReason}`).toMatchObject({ execution: 'SUCCEEDED', status: 'succeeded' });
        // The retries' waits (seconds to a CircuitOpen's 30 s each) passed on the test's clock, not in real time.
        expect(refunds.clock.now().getTime() - started).toBeGreaterThan(30_000);
        const paid = refunds.world.payments.refunds().map((refund) => refund.refundRequestId);
        expect(new Set(paid).size).toBe(paid.length);
        expect(run.report.recovery).toBeUndefined();
      } finally {
        await refunds.close();
      }
    }
  });

  it('expires an undecided approval when the injected clock passes its deadline', async () => {
    const clock = new TestClock('2026-03-01T00:00:00Z');
    env = await createTestEnvironment({ agent: dev, clock });
    const run = env.start({ urgent: true });
    await env.nextApproval();
    await env.skip(24 * 3600_000 + 1);
    expect((await run.result()).report.approvals).toMatchObject({ expired: 1 });
    expect(sent.size).toBe(0);
  });

  it('times a hung tool out when the test skips past its timeout, with no real wait', async () => {
    let called!: () => void;
    const calling = new Promise<void>((resolve) => (called = resolve));
    let signal: AbortSignal | undefined;
    const told: unknown[] = [];
    const hung = withDev(
      defineAgent({
        name: 'kit-hung',
        model: 'sim:savepoint-sim-1',
        system: 'Look it up.',
        input: z.object({}).strict(),
        prompt: () => 'Look it up.',
        tools: [
          defineTool({
            name: 'lookup',
            description: 'Never answers.',
            input: z.object({}).strict(),
            effect: 'read',
            timeoutMs: 30_000,
            execute: (_args, context) => ((signal = context.signal), called(), new Promise(() => undefined)),
          }),
        ],
      }),
      { policy: oneTurnPolicy([{ id: 'call_1', name: 'lookup', input: {} }], (results) => told.push(...results.map((result) => JSON.parse(result.content)))) },
    );
    env = await createTestEnvironment({ agent: hung });
    const run = env.start({});
    await calling;
    // The tool's timer aborts its signal inside the clock's move: a millisecond short of 30 s it has not.
    await env.skip(29_999);
    expect(signal!.aborted).toBe(false);
    await env.skip(1);
    expect(signal!.aborted).toBe(true);
    expect((await run.result()).status).toBe('succeeded');
    expect(told).toEqual([{ error: 'timeout', message: 'lookup did not answer within 30000 ms (its timeoutMs)' }]);
  });

  it('crashes the engine at every boundary of the write tool and each resumed run sends it once', async () => {
    const seen: string[] = [];
    const clock = new TestClock('2026-03-01T00:00:00Z');
    const resumedAt: number[] = [];
    const cases = await forEachCrashPoint({
      agent: dev,
      input: { urgent: false },
      clock,
      check: ({ boundary, run }) => {
        seen.push(boundary);
        resumedAt.push(clock.now().getTime());
        expect(run.status, boundary).toBe('succeeded');
        // One idempotency key: the provider made one note. Only a crash between its answer and
        // the ledger's record (after-commit) re-sends the call, with the same key.
        expect(sent.size, boundary).toBe(1);
        expect(calls, boundary).toHaveLength(boundary === 'after-commit' ? 2 : 1);
        sent.clear();
        calls.length = 0;
      },
    });
    expect(seen).toEqual(TOOL_CALL_BOUNDARIES);
    expect(cases).toHaveLength(TOOL_CALL_BOUNDARIES.length);
    // The test's clock moves only as each restart sees it: past the dead engine's claims (a lease of
    // 1 s), once per case. The dead engine's invocations ran out their function timeouts on its own.
    expect(resumedAt).toEqual(TOOL_CALL_BOUNDARIES.map((_, n) => Date.parse('2026-03-01T00:00:00Z') + (n + 1) * 1_001));
  }, 120_000);

  it('kills a real engine process (SIGKILL) at every boundary of the write tool, and each resumed run saves the note once', async () => {
    const seen: string[] = [];
    const cases = await forEachCrashPoint({
      agent: journalNotes,
      input: { text: 'lunch at noon' },
      kill: { agentModule: new URL('./fixtures/journal-notes.ts', import.meta.url) },
      check: ({ boundary, run, world }) => {
        seen.push(boundary);
        expect(run.status, boundary).toBe('succeeded');
        // The provider's journal, written by the killed process and by the one that resumed it:
        // one note; only a kill between its answer and the ledger's record re-sends, with the same key.
        const { requests, saved } = world.journal();
        expect(saved.size, boundary).toBe(1);
        expect(requests, boundary).toHaveLength(boundary === 'after-commit' ? 2 : 1);
      },
    });
    expect(seen).toEqual(TOOL_CALL_BOUNDARIES);
    expect(cases).toHaveLength(TOOL_CALL_BOUNDARIES.length);
  }, 240_000);

  it("closes the agent's own dev world once per environment: a world that closes a file cannot close it twice", async () => {
    const worlds: { closes: number }[] = [];
    const filed = withDev(agent, {
      policy: dev.dev!.policy!,
      world: async () => {
        const world = { closes: 0 };
        worlds.push(world);
        return {
          env: {},
          close: async () => {
            if (++world.closes > 1) throw Object.assign(new Error('EBADF: bad file descriptor, close'), { code: 'EBADF' });
          },
        };
      },
    });
    env = await createTestEnvironment({ agent: filed });
    await env.run({ urgent: false });
    await env.close();
    env = undefined;
    expect(worlds.map((world) => world.closes)).toEqual([1]);

    worlds.length = 0;
    const cases = await forEachCrashPoint({ agent: filed, input: { urgent: false }, boundaries: ['after-claim'], check: () => undefined });
    expect(cases).toHaveLength(1);
    // The dying engine's world and the resumed one's, each closed once.
    expect(worlds.map((world) => world.closes)).toEqual([1, 1]);
  });

  // A provider without idempotency keys, and the tool's reconcile: at every boundary the resumed run
  // sends once — after the crash it asks reconcile first, once the settle time from the send is
  // over (the kit's clock moves past it, as a restart would see it), and sends only if not found.
  const mailCase = (name: string) => ({ boundary, run, world }: CrashCase<NotesWorld>) => {
    expect(run.status, `${name} ${boundary}`).toBe('succeeded');
    const { requests } = world.journal();
    expect(requests, `${name} ${boundary}`).toHaveLength(1);
  };

  it('proves a reconcile tool at every boundary in process: each resumed run sends the mail once', async () => {
    const seen: string[] = [];
    const cases = await forEachCrashPoint({ agent: journalMail, input: { text: 'lunch at noon' }, check: (crash) => (seen.push(crash.boundary), mailCase('in process')(crash)) });
    expect(seen).toEqual(TOOL_CALL_BOUNDARIES);
    // After a crash with the send of unknown outcome, the call was reconciled, not sent blindly.
    const afterCommit = cases.find((crash) => crash.boundary === 'after-commit')!;
    expect(afterCommit.run.report.status).toBe('succeeded');
  }, 120_000);

  it('proves a reconcile tool at every boundary with a killed process: each resumed run sends the mail once', async () => {
    const seen: string[] = [];
    await forEachCrashPoint({
      agent: journalMail,
      input: { text: 'lunch at noon' },
      kill: { agentModule: new URL('./fixtures/journal-mail.ts', import.meta.url) },
      check: (crash) => (seen.push(crash.boundary), mailCase('killed')(crash)),
    });
    expect(seen).toEqual(TOOL_CALL_BOUNDARIES);
  }, 240_000);

  it('refuses a clock or an approval function with kill: the killed process runs on the system clock and answers from its command line', async () => {
    const kill = { agentModule: new URL('./fixtures/journal-notes.ts', import.meta.url) };
    await expect(forEachCrashPoint({ agent: journalNotes, input: { text: 'x' }, kill, clock: new TestClock(), check: () => undefined })).rejects.toThrow(/clock: a killed process runs on the system clock/);
    await expect(forEachCrashPoint({ agent: journalNotes, input: { text: 'x' }, kill, approve: () => 'approve', check: () => undefined })).rejects.toThrow(/approve: the killed process answers approvals with a fixed/);
  });

  it('refuses a boundary that is not one, and a killed process\'s module that is no file, before any case runs', async () => {
    await expect(forEachCrashPoint({ agent: dev, input: { urgent: false }, boundaries: ['nowhere' as never], check: () => undefined })).rejects.toThrow(/^forEachCrashPoint: boundaries: "nowhere" is not a boundary of a tool call \(model-call, /);
    const kill = { agentModule: new URL('./fixtures/no-such-agent.ts', import.meta.url) };
    await expect(forEachCrashPoint({ agent: journalNotes, input: { text: 'x' }, kill, check: () => undefined })).rejects.toThrow(/^forEachCrashPoint: kill\.agentModule: no file .*no-such-agent\.ts \(the agent's module, which the killed process runs\)$/);
  });

  it('refuses a tool that is not one of the agent\'s write tools, naming them', async () => {
    await expect(forEachCrashPoint({ agent: dev, input: { urgent: false }, tools: ['send_mail'], check: () => undefined })).rejects.toThrow(/"send_mail" is not a write tool of kit-notes \(save_note\)/);
  });

  it('refuses what is not an agent (a module namespace, a missing import), naming it, before anything starts', async () => {
    const namespace = { default: dev, saved: new Map() };
    await expect(createTestEnvironment({ agent: namespace as never })).rejects.toThrow('createTestEnvironment: agent: expected an agent made by defineAgent (or withDev), got an object with default, saved');
    await expect(createTestEnvironment({ agent: undefined as never })).rejects.toThrow('createTestEnvironment: agent: expected an agent made by defineAgent (or withDev), got undefined');
    // A path where the agent belongs: quoted, as every value the kit refuses is (lambdas/shared/text.ts shownValue).
    await expect(createTestEnvironment({ agent: './my-agent.js' as never })).rejects.toThrow('createTestEnvironment: agent: expected an agent made by defineAgent (or withDev), got "./my-agent.js"');
    await expect(forEachCrashPoint({ agent: namespace as never, input: {}, check: () => undefined })).rejects.toThrow('forEachCrashPoint: agent: expected an agent made by defineAgent (or withDev), got an object with default, saved');
  });

  it('refuses an approve that is no answer, naming it, rather than leaving the run to wait for the test\'s timeout', async () => {
    // The approval API refuses 'yes' as a decision: the run would wait for one until the test's timeout.
    await expect(createTestEnvironment({ agent: dev, approve: 'yes' as never })).rejects.toThrow(
      `createTestEnvironment: approve: expected 'approve', 'reject', a function that answers each approval, or undefined (every approval waits for decide), got "yes"`,
    );
    await expect(createTestEnvironment({ agent: dev, approve: true as never })).rejects.toThrow(/^createTestEnvironment: approve: expected .*, got true$/);
    await expect(forEachCrashPoint({ agent: dev, input: { urgent: true }, approve: 'approved' as never, check: () => undefined })).rejects.toThrow(/^forEachCrashPoint: approve: expected .*, got "approved"$/);
    expect(sent.size).toBe(0);
  });

  it('refuses a skip that is no finite number of milliseconds, or one past the year 9999, and leaves the clock where it was', async () => {
    const clock = new TestClock('2026-03-01T00:00:00Z');
    // Infinity made the clock no date, a string was appended to its time: every run after failed with "Invalid time value".
    expect(() => clock.advance(Infinity)).toThrow('TestClock.advance: ms must be a finite number ≥ 0, got Infinity');
    expect(() => clock.advance('1000' as never)).toThrow('TestClock.advance: ms must be a finite number ≥ 0, got "1000"');
    expect(() => clock.advance(-1)).toThrow('TestClock.advance: ms must be a finite number ≥ 0, got -1');
    // Past 9999 an ISO time sorts before the ledger's deadlines (`+010000-…` < `2026-…`): no approval would expire.
    expect(() => clock.advance(1e15)).toThrow('TestClock.advance: 1000000000000000 ms moves the clock past 9999-12-31T23:59:59.999Z, the last time the ledger records (it is 2026-03-01T00:00:00.000Z)');
    expect(clock.now().toISOString()).toBe('2026-03-01T00:00:00.000Z');
    env = await createTestEnvironment({ agent: dev, clock });
    await expect(env.skip(Number.MAX_SAFE_INTEGER)).rejects.toThrow(/^TestClock\.advance: 9007199254740991 ms moves the clock past 9999-12-31T23:59:59\.999Z/);
    expect((await env.run({ urgent: false })).status).toBe('succeeded');
    // Up to its last millisecond, it moves.
    clock.advance(Date.parse('9999-12-31T23:59:59.999Z') - clock.now().getTime());
    expect(clock.now().toISOString()).toBe('9999-12-31T23:59:59.999Z');
  });

  it('closes a world given to it once, however often close is called (in the test and in afterEach)', async () => {
    let closes = 0;
    const world = {
      env: {},
      close: async () => {
        if (++closes > 1) throw Object.assign(new Error('EBADF: bad file descriptor, close'), { code: 'EBADF' });
      },
    };
    env = await createTestEnvironment({ agent: dev, world });
    expect((await env.run({ urgent: false })).status).toBe('succeeded');
    await env.close();
    await env.close();
    expect(closes).toBe(1);
  });

  it('refuses the other options given wrong (failRate, seed, toolSecrets, clock), naming each, before anything starts', async () => {
    const refused = (options: Record<string, unknown>) => createTestEnvironment({ agent: dev, ...options } as never);
    await expect(refused({ failRate: '0.5' })).rejects.toThrow('createTestEnvironment: failRate: expected a number from 0 to 1, got "0.5"');
    await expect(refused({ failRate: 2 })).rejects.toThrow('createTestEnvironment: failRate: expected a number from 0 to 1, got 2');
    await expect(refused({ seed: 'abc' })).rejects.toThrow('createTestEnvironment: seed: expected an integer, got "abc"');
    await expect(refused({ toolSecrets: { mail: 1 } })).rejects.toThrow('createTestEnvironment: toolSecrets.mail: expected a string, got 1');
    await expect(refused({ toolSecrets: 'key' })).rejects.toThrow('createTestEnvironment: toolSecrets: expected an object of strings by name, got "key"');
    await expect(refused({ clock: { now: () => new Date() } })).rejects.toThrow('createTestEnvironment: clock: expected a TestClock (new TestClock(start)), got an object with now');
    await expect(forEachCrashPoint({ agent: dev, input: { urgent: false }, seed: 1.5, check: () => undefined } as never)).rejects.toThrow('forEachCrashPoint: seed: expected an integer, got 1.5');
    expect(sent.size).toBe(0);
  });

  it('refuses an option it does not take (a typo), naming it and the options, rather than ignoring it', async () => {
    // `aprove` ignored left every approval pending: the run waited for the test's timeout.
    await expect(createTestEnvironment({ agent: dev, aprove: 'approve' } as never)).rejects.toThrow(
      'createTestEnvironment: aprove: no such option (the options are agent, world, clock, approve, stateDir, failRate, seed, toolSecrets)',
    );
    await expect(createTestEnvironment(null as never)).rejects.toThrow('createTestEnvironment: expected an object of options, got null');
    // A misspelt boundaries ran every boundary; a stateDir was replaced by each case's own.
    await expect(forEachCrashPoint({ agent: dev, input: { urgent: false }, boundary: ['after-claim'], check: () => undefined } as never)).rejects.toThrow(
      /^forEachCrashPoint: boundary: no such option \(the options are agent, clock, approve, failRate, seed, toolSecrets, input, tools, boundaries, kill, check\)$/,
    );
    await expect(forEachCrashPoint({ agent: dev, input: { urgent: false }, stateDir: '/tmp', check: () => undefined } as never)).rejects.toThrow(/^forEachCrashPoint: stateDir: no such option/);
    env = await createTestEnvironment({ agent: dev });
    // A budget beside `config` rather than in it ran with the agent's.
    await expect(env.run({ urgent: false }, { maxSteps: 3 } as never)).rejects.toThrow('run: maxSteps: no such option (the options are runId, config)');
    expect(sent.size).toBe(0);
  });

  it('refuses a stateDir, world, check, tools or boundaries of the wrong type, or an empty list, naming it, before anything starts', async () => {
    await expect(createTestEnvironment({ agent: dev, stateDir: 5 } as never)).rejects.toThrow("createTestEnvironment: stateDir: expected a directory's path, got 5");
    await expect(createTestEnvironment({ agent: dev, world: 'sim' } as never)).rejects.toThrow(
      `createTestEnvironment: world: expected a world as DevWorld (an object with env and close, as the agent's dev world), got "sim"`,
    );
    const matrix = (options: Record<string, unknown>) => forEachCrashPoint({ agent: dev, input: { urgent: false }, check: () => undefined, ...options } as never);
    // A missing check failed as "options.check is not a function" after a case's engine was crashed.
    await expect(matrix({ check: undefined })).rejects.toThrow('forEachCrashPoint: check: expected a function called with each case, got undefined');
    // An empty list ran no case: the matrix passed with its check never called.
    await expect(matrix({ boundaries: [] })).rejects.toThrow('forEachCrashPoint: boundaries: expected a list of one or more (or no boundaries option: every one), got an array of 0 items');
    await expect(matrix({ tools: [] })).rejects.toThrow('forEachCrashPoint: tools: expected a list of one or more (or no tools option: every one), got an array of 0 items');
    expect(sent.size).toBe(0);
  });

  it('says a call after close is one, naming it: a run left going rejects its result rather than "the ledger is closed"', async () => {
    env = await createTestEnvironment({ agent: dev });
    const run = env.start({ urgent: true });
    await env.nextApproval();
    await env.close();
    await expect(run.result()).rejects.toThrow(`result of run ${run.runId}: the test environment is closed (await each run's result before close)`);
    await expect(env.nextApproval()).rejects.toThrow('nextApproval: the test environment is closed');
    await expect(env.pendingApprovals()).rejects.toThrow('pendingApprovals: the test environment is closed');
    await expect(env.skip(1_000)).rejects.toThrow('skip: the test environment is closed');
    await expect(env.run({ urgent: false })).rejects.toThrow(/^run test-kit-notes-\d+ did not start: the test environment is closed$/);
    expect(sent.size).toBe(0);
  });

  it("rejects the run's result when an approve function answers no decision, or throws, naming it, rather than leaving the approval pending to the test's timeout", async () => {
    env = await createTestEnvironment({ agent: dev, approve: () => 'yes' as never });
    await expect(env.run({ urgent: true })).rejects.toThrow(/^approve: answering approval apv_\S+ \(\w+\): expected 'approve', 'reject' or undefined \(leave it to decide\), got "yes"$/);
    await env.close();
    env = await createTestEnvironment({
      agent: dev,
      approve: () => {
        throw new Error('no rule for this approval');
      },
    });
    await expect(env.run({ urgent: true })).rejects.toThrow(/^approve: answering approval apv_\S+ \(\w+\): no rule for this approval$/);
    await env.close();
    // An async function answers a promise: said as one, not as "an object with no keys".
    env = await createTestEnvironment({ agent: dev, approve: (async () => 'approve') as never });
    await expect(env.run({ urgent: true })).rejects.toThrow(/^approve: answering approval apv_\S+ \(\w+\): expected .*, got a promise \(approve answers at once: no async function; decide later with decide\)$/);
    expect(sent.size).toBe(0);
  });

  it('refuses a decision after close, naming the approval and why, not a failed fetch', async () => {
    env = await createTestEnvironment({ agent: dev });
    env.start({ urgent: true });
    const approval = await env.nextApproval();
    await env.close();
    await expect(env.decide(approval.approvalId, 'approve')).rejects.toThrow(`decide ${approval.approvalId}: the test environment is closed (decide before close)`);
  });

  it('says why a decision is refused with the approval API\'s message, not its JSON body', async () => {
    env = await createTestEnvironment({ agent: dev });
    const run = env.start({ urgent: true });
    const approval = await env.nextApproval();
    await expect(env.decide('nope', 'approve')).rejects.toThrow(/^decide nope: approvalId: expected an id like apv_…, got "nope" \(HTTP 400\)$/);
    await env.decide(approval.approvalId, 'approve');
    await expect(env.decide(approval.approvalId, 'reject')).rejects.toThrow(new RegExp(`^decide ${approval.approvalId}: approval ${approval.approvalId} is already approved \\(by [^)]+\\) \\(HTTP 409\\)$`));
    expect((await run.result()).status).toBe('succeeded');
  });
});
