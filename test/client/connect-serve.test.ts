import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { connect, runsClient, type Run, type RunsClient } from '../../client/index.js';
import { servedAt } from '../../client/connect.js';
import { leftBehind, savepoint, smallDay, startUntil, workspace } from '../support/cli-process.js';
import { startServe, watchedLookups } from '../support/serve-process.js';
import { cachedTemplate } from '../../local/template/cache.js';

/**
 * `savepoint serve` as its own process, driven by the public client over loopback
 * (`connect({ stateDir })`: the address and credential serve published): it takes runs, keeps
 * serving after one waits or ends, refuses a second serve on its state directory, drains on
 * SIGTERM, and a new serve resumes the run the first left unfinished.
 */
const { children, dirs } = leftBehind();
/**
 * The refund reconciler's day: six refund requests, two of them large (the approvals a person
 * decides), not the sample day’s 25: the same serving, waiting and resuming, for less CPU (the file: 6.9–7.3 s against 7.9–9.5 s, two sittings on 2026-12-05).
 */
const day = smallDay;

const serve = (args: string[]) => startServe(args, children);
/** The module serve runs (`--agent refund-reconciler`), and another agent's, each as a path. */
const REFUND_AGENT = fileURLToPath(new URL('../../agents/refund-reconciler/agent.ts', import.meta.url));
const OTHER_AGENT = fileURLToPath(new URL('../cli/fixtures/held-note.ts', import.meta.url));

/** The status `origin` answers a GET of `path` with, sent as it is written (no `..` resolved). */
function rawStatus(origin: URL, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const asked = httpRequest({ host: origin.hostname, port: origin.port, path }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    asked.on('error', reject).end();
  });
}

/** Decides every approval the run waits for until it has ended. */
async function approveUntilEnded(client: RunsClient, runId: string): Promise<Run> {
  for (;;) {
    const run = await client.wait(runId, { untilInput: true });
    if (run.lifecycle !== 'input_required') return run;
    for (const approval of await client.approvals(runId)) await client.decide(approval.approvalId, 'approve', { reason: 'checked' });
  }
}

describe('savepoint serve, driven by the client', () => {
  it('serves runs until stopped, refuses a second serve, drains on SIGTERM, and resumes the unfinished run when it starts again', async () => {
    const { stateDir, args } = await workspace('serve', day);
    dirs.push(dirname(stateDir));
    const first = await serve(args('serve'));
    const client = await connect({ stateDir });

    const started = await client.start({ agent: 'refund-reconciler', input: { date: day.date }, runId: 'serve-r1', config: { approvalTimeoutSeconds: 3600 } });
    expect(started).toMatchObject({ runId: 'serve-r1', agent: 'refund-reconciler', created: true, lifecycle: 'working' });
    const waiting = await client.wait('serve-r1', { untilInput: true });
    expect(waiting.lifecycle).toBe('input_required');
    expect((await client.approvals('serve-r1')).length).toBeGreaterThan(0);
    // An abort ends a long-poll in flight: the wait rejects before the API has answered it.
    const runsBase = (JSON.parse(readFileSync(join(stateDir, 'engine.json'), 'utf8')) as { endpoints: { runs: string } }).endpoints.runs.replace(/\/runs$/, '');
    let sent!: () => void;
    const inFlight = new Promise<void>((resolve) => (sent = resolve));
    let answered = false;
    const watched = runsClient({
      base: runsBase,
      // The wait's long-poll (after its first, plain read of the run).
      fetch: (url, init) => {
        if (!String(url).includes('?wait=')) return fetch(url, init);
        sent();
        return fetch(url, init).then((response) => ((answered = true), response));
      },
    });
    const controller = new AbortController();
    const stopped = watched.wait('serve-r1', { signal: controller.signal });
    await inFlight;
    const reason = new Error('the user left');
    controller.abort(reason);
    // Told apart from a failure as Node's own aborted calls are: by its name and code.
    await expect(stopped).rejects.toMatchObject({ name: 'AbortError', code: 'ABORT_ERR', message: 'stopped waiting for run serve-r1', cause: reason });
    expect(answered).toBe(false);
    // An abort ends a stream of the waiting run where it is, without an error.
    const following = new AbortController();
    const followed: string[] = [];
    for await (const event of client.events('serve-r1', { signal: following.signal })) {
      followed.push(event.id);
      if (followed.length === 3) following.abort();
    }
    expect(followed).toHaveLength(3);
    // The same run id again: the same run, nothing started.
    expect(await client.start({ input: { date: day.date }, runId: 'serve-r1' })).toMatchObject({ runId: 'serve-r1', created: false, executionArn: started.executionArn });
    // A second run, cancelled while it lives: the kill names who asked.
    await client.start({ input: { date: day.date }, runId: 'serve-r2', config: { approvalTimeoutSeconds: 3600 } });
    const cancelled = await client.cancel('serve-r2', { reason: 'not needed' });
    expect(cancelled.report.killed).toMatchObject({ by: expect.stringMatching(/^local:/), reason: 'not needed' });

    // One engine per state directory: a second serve is refused with one clear message.
    const second = await savepoint(args('serve'));
    expect(second.code).toBe(2);
    expect(second.stderr).toMatch(/^savepoint: the state directory \S+ is already served by `savepoint serve` \(pid \d+, since [^)]+\): its runs API takes every run/m);

    // SIGTERM: it drains and ends (0), the run saved unfinished, engine.json gone.
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.output()).toMatch(/SIGTERM received — draining/);
    expect(existsSync(join(stateDir, 'engine.json'))).toBe(false);

    // A new serve resumes it; the client finds the new address in the state directory.
    const again = await serve(args('serve'));
    expect(again.output()).toMatch(/^savepoint: resumed run serve-r1 /m);
    // The first client finds it too: a request its old address refuses goes to the one serve published now.
    expect(await client.get('serve-r1')).toMatchObject({ runId: 'serve-r1' });
    const reconnected = await connect({ stateDir });
    // The console on the same port: its page, and its API behind its session token (and only for this port's Host).
    const consoleUrl = new URL((JSON.parse(readFileSync(join(stateDir, 'engine.json'), 'utf8')) as { endpoints: { console: string; runs: string } }).endpoints.console);
    expect(consoleUrl.port).toBe(new URL((JSON.parse(readFileSync(join(stateDir, 'engine.json'), 'utf8')) as { endpoints: { runs: string } }).endpoints.runs).port);
    // Its address and credential, handed to an app that does not read the state directory.
    const runsUrl = new URL((JSON.parse(readFileSync(join(stateDir, 'engine.json'), 'utf8')) as { endpoints: { runs: string } }).endpoints.runs);
    const byUrl = await connect({ url: runsUrl.origin, credential: runsUrl.pathname.split('/')[1]! });
    expect(await byUrl.get('serve-r1')).toMatchObject({ runId: 'serve-r1', agent: 'refund-reconciler' });
    await expect(connect({ url: runsUrl.origin, credential: 'not-the-credential' }).then((wrong) => wrong.get('serve-r1'))).rejects.toMatchObject({ name: 'RunsApiError', status: 403 });
    const token = consoleUrl.hash.replace(/^#token=/, '');
    expect((await fetch(consoleUrl.origin)).status).toBe(200);
    expect(await (await fetch(`${consoleUrl.origin}/api/info`, { headers: { 'x-savepoint-token': token } })).json()).toMatchObject({ agent: 'refund-reconciler' });
    expect((await fetch(`${consoleUrl.origin}/api/info`)).status).toBe(403);
    const finished = await approveUntilEnded(reconnected, 'serve-r1');
    expect(finished).toMatchObject({ runId: 'serve-r1', lifecycle: 'completed', report: { status: 'succeeded' } });
    expect(finished.pollAfterSeconds).toBeUndefined();
    // It keeps serving after the run has ended: the cancelled run reads as cancelled, and both are listed.
    expect(await reconnected.wait('serve-r2')).toMatchObject({ lifecycle: 'cancelled' });
    const { runs } = await reconnected.list({ agent: 'refund-reconciler' });
    expect(runs.map((run) => [run.runId, run.lifecycle]).sort()).toEqual([['serve-r1', 'completed'], ['serve-r2', 'cancelled']]);
    expect(await reconnected.get('never-ran')).toBeUndefined();

    // The CLI while serve runs: \`run\` hands its run to serve (the client) and reports it; \`kill\` cancels through the runs API.
    const handed = await savepoint(args('run', '--run-id', 'serve-r3', '--input', JSON.stringify({ date: day.date })));
    expect(handed.code).toBe(0);
    expect(handed.stdout).toMatch(/^savepoint: run serve-r3 started on `savepoint serve` \(pid \d+\), which drives it/m);
    expect(handed.stdout).toMatch(/^run serve-r3 \(refund-reconciler .*\): succeeded/m);
    // With the figures of the execution that drove it, as a local run reports its own (read through serve's Step Functions API).
    expect(handed.stdout).toMatch(/^ {2}Lambda executions +\d+ \(0 retries\)$/m);
    // The same again: the run has ended, and is answered as it is (as a local run says it), not "held by serve, which drives it";
    // --json prints what a local run's does: the report, its lifecycle and its execution's figures.
    const handedAgain = await savepoint(args('run', '--run-id', 'serve-r3', '--input', JSON.stringify({ date: day.date }), '--json'));
    expect(handedAgain.code).toBe(0);
    expect(handedAgain.stderr).toMatch(/^savepoint: run serve-r3 had already finished; nothing to do \(pass --run-id <a new id> to start another run\)$/m);
    expect(handedAgain.stderr).not.toMatch(/which drives it/);
    const json = JSON.parse(handedAgain.stdout) as { lifecycle: string; execution: { executionArn: string; status: string; lambdaInvocations: number; states: Record<string, { entered: number }> } };
    expect(json).toMatchObject({ runId: 'serve-r3', status: 'succeeded', lifecycle: 'completed', execution: { status: 'SUCCEEDED', retries: 0 } });
    expect(json.execution.lambdaInvocations).toBeGreaterThan(3);
    expect(json.execution.states['StartRun']).toMatchObject({ entered: 1 });
    // What a run handed to serve cannot take is refused before anything starts (exit 2), not dropped: a crash point, an
    // approval mode serve does not run (the run waited a day for a person), a module serve does not run (the run ran on
    // serve's agent, not the code asked for).
    const journal = readFileSync(join(stateDir, 'payments.jsonl'), 'utf8');
    const notTaken = await savepoint(args('run', '--run-id', 'serve-r5', '--input', JSON.stringify({ date: day.date }), '--approve', 'approve', '--crash-at', 'before-call'));
    expect(notTaken).toMatchObject({ code: 2, stdout: '' });
    expect(notTaken.stderr).toMatch(/^savepoint: --crash-at before-call; --approve approve \(its approvals are decided with `savepoint approve <id>` or its console\): `savepoint serve` \(pid \d+\) owns \S+, and a run it is handed runs with its engine's own settings; drop them, or stop it/);
    const otherCode = await savepoint(['--state-dir', stateDir, 'run', '--run-id', 'serve-r6', '--input', JSON.stringify({ date: day.date }), '--agent', OTHER_AGENT]);
    expect(otherCode).toMatchObject({ code: 2, stdout: '' });
    expect(otherCode.stderr).toMatch(new RegExp(`^savepoint: --agent ${OTHER_AGENT}: \`savepoint serve\` \\(pid \\d+\\) owns \\S+ and runs refund-reconciler \\(${REFUND_AGENT}\\), not ${OTHER_AGENT}; name its agent, or stop it`));
    // A budget handed to serve is parsed as a local run parses it, named as typed: sent as it came, `0x10` ran as 16.
    const hexBudget = await savepoint(args('run', '--run-id', 'serve-r7', '--input', JSON.stringify({ date: day.date }), '--max-steps', '0x10'));
    expect(hexBudget).toMatchObject({ code: 2, stdout: '', stderr: 'savepoint: invalid options: --max-steps: expected a whole number in decimal digits, not "0x10"\n' });
    for (const runId of ['serve-r5', 'serve-r6', 'serve-r7']) expect(await reconnected.get(runId)).toBeUndefined();
    expect(readFileSync(join(stateDir, 'payments.jsonl'), 'utf8')).toBe(journal);
    // A fork is handed to serve too (the run request's \`fork\`, as an application sends it), its agent named by the
    // path of serve's own module: the hazard report, then serve drives it; a dry fork sends no write.
    const forked = await savepoint(['--state-dir', stateDir, 'fork', 'serve-r3', '--at', '2', '--effects', 'dry', '--yes', '--run-id', 'serve-r3-fork', '--agent', REFUND_AGENT]);
    expect(forked.stderr).toBe('');
    expect(forked.code).toBe(0);
    expect(forked.stdout).toMatch(/^dry fork of serve-r3 at turn 2: no write is sent/m);
    expect(forked.stdout).toMatch(/^savepoint: fork serve-r3-fork of serve-r3 started on `savepoint serve` \(pid \d+\), which drives it/m);
    expect(forked.stdout).toMatch(/^run serve-r3-fork \(refund-reconciler .*\): succeeded/m);
    expect(await reconnected.get('serve-r3-fork')).toMatchObject({ lifecycle: 'completed', report: { status: 'succeeded', wouldHave: expect.any(Object) } });
    // \`world\` waits for serve to stop, and says so without serve's endpoints, each of which carries a credential.
    const world = await savepoint(['--state-dir', stateDir, 'world', '--agent', 'refund-reconciler']);
    expect(world.code).toBe(2);
    expect(world.stderr).toMatch(/^savepoint: an engine \(pid \d+\) owns \S+ and its world while it runs; ask again when it stops$/m);
    const published = JSON.parse(readFileSync(join(stateDir, 'engine.json'), 'utf8')) as { endpoints: Record<string, string> };
    for (const endpoint of Object.values(published.endpoints)) expect(world.stderr).not.toContain(endpoint);
    // The same fork again: its run id is taken, so it is refused (exit 2), not answered with the fork that ran.
    const twice = await savepoint(['--state-dir', stateDir, 'fork', 'serve-r3', '--at', '2', '--yes', '--run-id', 'serve-r3-fork']);
    expect(twice.code).toBe(2);
    expect(twice.stderr).toMatch(/^savepoint: runId: run serve-r3-fork exists already and is not this fork: name a new run id$/m);
    expect(twice.stdout).not.toMatch(/succeeded/);
    expect(readFileSync(join(stateDir, 'payments.jsonl'), 'utf8')).toBe(journal);
    await reconnected.start({ input: { date: day.date }, runId: 'serve-r4', config: { maxSteps: 1, onBudgetExceeded: 'ask', approvalTimeoutSeconds: 3600 } });
    expect(await reconnected.wait('serve-r4', { untilInput: true })).toMatchObject({ lifecycle: 'input_required' });
    const killed = await savepoint(['--state-dir', stateDir, 'kill', 'serve-r4', '--reason', 'from the CLI']);
    expect(killed.code).toBe(0);
    expect(await reconnected.wait('serve-r4')).toMatchObject({ lifecycle: 'cancelled', report: { killed: { by: expect.stringMatching(/^local:/), reason: 'from the CLI' } } });
    const again2 = await savepoint(['--state-dir', stateDir, 'kill', 'serve-r4']);
    expect(again2.code).toBe(2);
    expect(again2.stderr).toMatch(/run serve-r4 is killed, not running/);
    await expect(reconnected.start({ input: { day: 1 } })).rejects.toMatchObject({ name: 'RunsApiError', status: 400, message: expect.stringMatching(/^invalid input of agent refund-reconciler/) });
    // Ctrl-C stops the CLI's waiting, not the run: said, with where the run goes on (exit 130, as a local run's).
    // (A run that asks a person to extend its budget after one step: it waits for the person, whatever the world has paid.)
    const waitingCli = startUntil(['--state-dir', stateDir, 'run', '--run-id', 'serve-r7', '--input', JSON.stringify({ date: day.date }), '--max-steps', '1', '--on-budget-exceeded', 'ask', '--approval-timeout', '3600'], children, /waiting for it/);
    await waitingCli.reached;
    waitingCli.child.kill('SIGINT');
    expect(await waitingCli.exited).toBe(130);
    expect(waitingCli.output()).toMatch(/^savepoint: interrupted — stopped waiting; `savepoint serve` \(pid \d+\) goes on with run serve-r7: `savepoint --state-dir \S+ status serve-r7` shows it$/m);
    expect((await reconnected.get('serve-r7'))?.report.status).toBe('running');
    await reconnected.cancel('serve-r7');
    expect(await reconnected.wait('serve-r7')).toMatchObject({ lifecycle: 'cancelled' });

    // Killed without its cleanup, serve leaves engine.json behind: the client says it is gone, naming its pid.
    again.child.kill('SIGKILL');
    await again.exited;
    expect(existsSync(join(stateDir, 'engine.json'))).toBe(true);
    const gone = { name: 'RunsApiError', status: 503, message: expect.stringMatching(/^stateDir: no savepoint engine serves \S+: the serve that wrote \S+engine\.json \(pid \d+\) is gone; start one with `savepoint serve/) };
    await expect(reconnected.list()).rejects.toMatchObject(gone);
    await expect(connect({ stateDir })).rejects.toMatchObject(gone);
  }, 180_000);

  it('waits through a restart of serve: a wait in flight when serve stops ends with the run, on the serve started again; one with nothing serving ends on its signal', async () => {
    const { stateDir, args } = await workspace('serve-wait', day);
    dirs.push(dirname(stateDir));
    const first = await serve(args('serve'));
    const client = await connect({ stateDir });
    await client.start({ agent: 'refund-reconciler', input: { date: day.date }, runId: 'waited', config: { approvalTimeoutSeconds: 3600 } });
    expect((await client.wait('waited', { untilInput: true })).lifecycle).toBe('input_required');
    // A wait for the run's end, in flight (a long-poll) when serve stops.
    const ended = client.wait('waited').then((run) => ({ run }), (error: unknown) => ({ error }));
    // connect's own client, whose lookups of the state directory the test sees: a lookup that finds
    // no serve is the wait in the gap; a second one, the wait asking again after its pause.
    const { locate, askedAgain } = watchedLookups(stateDir);
    const stopping = new AbortController();
    const abandoned = runsClient({ ...servedAt(stateDir), locate }).wait('waited', { signal: stopping.signal }).then((run) => ({ run }), (error: unknown) => ({ error }));
    // `savepoint run` handed to serve, waiting for the same run: it says that serve went away, and what goes on.
    const handed = startUntil(args('run', '--run-id', 'waited', '--input', JSON.stringify({ date: day.date })), children, /which drives it; waiting for it/);
    await handed.reached;

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(await handed.exited, handed.output()).toBe(1);
    expect(handed.output()).toMatch(/^savepoint: `savepoint serve` \(pid \d+\) stopped answering before run waited ended \([^)]+\): the run is saved, and goes on when serve starts again on this state directory; `savepoint --state-dir \S+ status waited` shows it$/m);
    // Nothing serves: the wait asks again (it threw the lookup's 503 at once), until its signal.
    await Promise.race([askedAgain, abandoned]);
    const reason = new Error('the user left');
    stopping.abort(reason);
    expect(await abandoned).toMatchObject({ error: { name: 'AbortError', message: 'stopped waiting for run waited', cause: reason } });

    // serve starts again and resumes the run; decided there, it ends, and so does the first wait.
    const again = await serve(args('serve'));
    try {
      expect(again.output()).toMatch(/^savepoint: resumed run waited /m);
      expect(await approveUntilEnded(client, 'waited')).toMatchObject({ lifecycle: 'completed' });
      expect(await ended).toMatchObject({ run: { runId: 'waited', lifecycle: 'completed', report: { status: 'succeeded' } } });
      // A refusal is not a gap: a run id no run has throws at once.
      await expect(client.wait('never-ran')).rejects.toMatchObject({ name: 'RunsApiError', status: 404 });
    } finally {
      again.child.kill('SIGTERM');
      await again.exited;
    }
  }, 120_000);

  it('refuses a port that is taken with one sentence (exit 2), and leaves the state directory unowned', async () => {
    const { stateDir, args } = await workspace('serve-port', day);
    dirs.push(dirname(stateDir));
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const refused = await savepoint(args('serve', '--port', String(port)));
      expect(refused.code).toBe(2);
      expect(refused.stderr).toBe(`savepoint: --port ${port}: the port is in use on 127.0.0.1; pass another, or none for any free port\n`);
      expect(existsSync(join(stateDir, 'engine.json'))).toBe(false);
      expect(existsSync(join(stateDir, 'owner.lock'))).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 120_000);

  it('serves several agents on one port: a start goes to the agent it names, a run and an approval to the engine that holds them', async () => {
    const { stateDir, args } = await workspace('serve-agents', day);
    dirs.push(dirname(stateDir));
    const serving = await serve([...args('serve'), '--agent', 'support-triage']);
    expect(serving.output()).toMatch(/^savepoint: agents refund-reconciler \(\S+\), support-triage \(\S+\/agents\/support-triage\)$/m);
    const client = await connect({ stateDir });

    const refunds = await client.start({ agent: 'refund-reconciler', input: { date: day.date }, runId: 'agents-refunds', config: { approvalTimeoutSeconds: 3600 } });
    const triage = await client.start({ agent: 'support-triage', input: { inbox: 'support@acme.example' }, runId: 'agents-triage', config: { approvalTimeoutSeconds: 3600 } });
    expect([refunds.agent, triage.agent]).toEqual(['refund-reconciler', 'support-triage']);
    await expect(client.start({ input: { date: day.date } })).rejects.toMatchObject({ status: 400, message: 'agent: this serve runs refund-reconciler, support-triage: name one' });
    await expect(client.start({ agent: 'nobody', input: {} })).rejects.toMatchObject({ status: 400, message: 'agent: no agent nobody here (this serve runs refund-reconciler, support-triage)' });
    const front = new URL((JSON.parse(readFileSync(join(stateDir, 'engine.json'), 'utf8')) as { endpoints: { runs: string } }).endpoints.runs);
    await expect((await connect({ url: front.origin, credential: 'not-the-credential' })).get('agents-triage')).rejects.toMatchObject({ status: 403 });
    await expect(client.start({ agent: 'support-triage', input: { inbox: 'x'.repeat(300 * 1024) } })).rejects.toMatchObject({ status: 413 });

    // While both wait for a person, every reader of the state directory sees both agents' runs.
    for (const runId of ['agents-refunds', 'agents-triage']) expect(await client.wait(runId, { untilInput: true })).toMatchObject({ runId, lifecycle: 'input_required' });
    const both = ['agents-refunds', 'agents-triage'];
    expect(new Set((await client.approvals()).map((approval) => approval.runId))).toEqual(new Set(both));
    const approvals = await savepoint(['--state-dir', stateDir, 'approvals', '--json']);
    expect(approvals.code).toBe(0);
    const listed = (JSON.parse(approvals.stdout) as { approvals: { runId: string; links: { url: string }[] }[] }).approvals;
    expect(new Set(listed.map((approval) => approval.runId))).toEqual(new Set(both));
    // Each approval's link goes to serve's one port (a tunnel to it reaches every agent's page),
    // which serves the page of the engine that holds the approval, with the page's own rules for the browser.
    for (const approval of listed) {
      const link = new URL(approval.links[0]!.url);
      expect(link.origin, approval.runId).toBe(front.origin);
      const page = await fetch(link);
      expect(page.status, approval.runId).toBe(200);
      expect(page.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
      expect(page.headers.get('referrer-policy')).toBe('no-referrer');
      expect(await page.text()).toContain(approval.runId);
    }
    // The page's button decides there: the second agent's approval, through the first port, by its link.
    const triageApproval = listed.find((approval) => approval.runId === 'agents-triage')!;
    const triageLink = new URL(triageApproval.links[0]!.url);
    const decided = await fetch(new URL(triageLink.pathname, front.origin), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ decision: 'approve', link: triageLink.searchParams.get('link') }) });
    expect(decided.status, await decided.clone().text()).toBe(200);
    expect(await decided.json()).toMatchObject({ status: 'approved' });
    // An approval no engine holds, by a link none signed: refused as one engine refuses it; a path out of the page's is the credential's.
    expect((await fetch(new URL('/v1/decide/apv_nobodyholdsthis?link=x', front.origin))).status).toBe(401);
    // (fetch would resolve the `..` itself: sent as written, as a client that does not.)
    expect(await rawStatus(front, '/v1/decide/../approvals')).toBe(403);
    expect(await rawStatus(front, '/v1/decide')).toBe(404);
    for (const [runId, agent] of [['agents-refunds', 'refund-reconciler'], ['agents-triage', 'support-triage']] as const) {
      const status = await savepoint(['--state-dir', stateDir, 'status', runId, '--json']);
      expect(status.code, status.stderr).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({ runId, agent, status: 'running', lifecycle: 'input_required', driven: true });
    }
    const runs = await savepoint(['--state-dir', stateDir, 'runs', '--json']);
    expect((JSON.parse(runs.stdout) as { runs: { runId: string; agent: string }[] }).runs.map(({ runId, agent }) => [runId, agent]).sort()).toEqual([['agents-refunds', 'refund-reconciler'], ['agents-triage', 'support-triage']]);
    // `--status` takes a lifecycle as the client has it, too: both wait for a person, neither has completed.
    for (const [status, listed] of [['input_required', both], ['completed', []]] as const) {
      const filtered = await savepoint(['--state-dir', stateDir, 'runs', '--status', status, '--json']);
      expect(filtered.code, filtered.stderr).toBe(0);
      expect((JSON.parse(filtered.stdout) as { runs: { runId: string }[] }).runs.map((run) => run.runId).sort()).toEqual([...listed].sort());
    }
    expect((await client.list()).runs.map((run) => run.runId)).toEqual(['agents-triage', 'agents-refunds']);
    // The console (on the same port) lists both, and shows each run.
    const consoleUrl = new URL((JSON.parse(readFileSync(join(stateDir, 'engine.json'), 'utf8')) as { endpoints: { console: string } }).endpoints.console);
    const token = { 'x-savepoint-token': consoleUrl.hash.slice('#token='.length) };
    const rows = (await (await fetch(new URL('/api/runs', consoleUrl.origin), { headers: token })).json()) as { runs: { runId: string; agent: string; lifecycle: string }[] };
    expect(rows.runs.map(({ runId, agent, lifecycle }) => ({ runId, agent, lifecycle }))).toEqual([
      { runId: 'agents-triage', agent: 'support-triage', lifecycle: 'input_required' },
      { runId: 'agents-refunds', agent: 'refund-reconciler', lifecycle: 'input_required' },
    ]);
    const shown = (await (await fetch(new URL('/api/runs/agents-triage', consoleUrl.origin), { headers: token })).json()) as { report: { agent: string }; approvals: unknown[] };
    expect(shown.report.agent).toBe('support-triage');
    expect(shown.approvals.length).toBeGreaterThan(0);

    // Each run to its end, its approvals decided through the one port.
    for (const runId of both) {
      const finished = await approveUntilEnded(client, runId);
      expect(finished).toMatchObject({ runId, lifecycle: 'completed' });
    }
    expect((await client.get('agents-triage'))?.agent).toBe('support-triage');
    // Its event stream through the same port, from its engine, to its last event.
    const events = [];
    for await (const event of client.events('agents-triage')) events.push(event);
    expect(events[0]?.type).toBe('run.started');
    expect(events.at(-1)?.type).toBe('run.finished');
    expect((await client.list({ agent: 'support-triage' })).runs.map((run) => run.runId)).toEqual(['agents-triage']);
    // The console steers the second agent's run on that agent's own engine: its report carries that
    // agent's summary, and a fork of it starts on that engine, from the parent's records there.
    const triageView = (await (await fetch(new URL('/api/runs/agents-triage', consoleUrl.origin), { headers: token })).json()) as { report: { summary?: { tickets?: number } } };
    expect(triageView.report.summary?.tickets).toBeGreaterThan(0);
    const forkAnswer = await fetch(new URL('/api/runs/agents-triage/fork', consoleUrl.origin), { method: 'POST', headers: { ...token, 'content-type': 'application/json' }, body: JSON.stringify({ at: 1, effects: 'dry' }) });
    expect(forkAnswer.status).toBe(200);
    expect(await forkAnswer.json()).toMatchObject({ ok: true, runId: 'agents-triage-fork-1-dry' });
    expect(await approveUntilEnded(client, 'agents-triage-fork-1-dry')).toMatchObject({ agent: 'support-triage', lifecycle: 'completed', report: { status: 'succeeded' } });
    const forkView = (await (await fetch(new URL('/api/runs/agents-triage-fork-1-dry', consoleUrl.origin), { headers: token })).json()) as { report: { summary?: unknown; wouldHave?: unknown }; lineage: { forkedFrom: { runId: string } | null } };
    expect(forkView.lineage.forkedFrom).toMatchObject({ runId: 'agents-triage' });
    expect(forkView.report.wouldHave).toMatchObject({ tickets: expect.any(Number) });
    await expect(client.list({ cursor: 'not-a-cursor' })).rejects.toMatchObject({ status: 400, message: expect.stringMatching(/^cursor: /) });
    await expect(client.list({ limit: 0 })).rejects.toMatchObject({ status: 400 });
    await expect(client.cancel('agents-triage')).rejects.toMatchObject({ status: 409 });
    expect(await client.get('never-ran')).toBeUndefined();
    // Each agent's own state directory answers the other commands.
    const status = await savepoint(['--state-dir', join(stateDir, 'agents', 'support-triage'), 'status', 'agents-triage']);
    expect(status.code).toBe(0);

    // Pages of every agent's runs, newest first, from one cursor: more runs of each, listed a page
    // of 1, 2 and 3 at a time, are the whole listing once each, in its order.
    for (const [index, agent] of ['refund-reconciler', 'support-triage', 'refund-reconciler', 'support-triage', 'support-triage'].entries()) {
      await client.start({ agent, input: agent === 'support-triage' ? { inbox: `page-${index}@acme.example` } : { date: day.date }, runId: `agents-page-${index}`, config: { approvalTimeoutSeconds: 3600 } });
    }
    // Compared by run id: a run's status moves on between two pages, its place in the order does not.
    const ids = (runs: readonly { runId: string }[]) => runs.map((run) => run.runId);
    const whole = (await client.list({ limit: 100 })).runs;
    expect(ids(whole).sort()).toEqual([...both, 'agents-triage-fork-1-dry', ...[0, 1, 2, 3, 4].map((index) => `agents-page-${index}`)].sort());
    expect(whole.map((run) => [run.createdAt, run.runId])).toEqual(whole.map((run) => [run.createdAt, run.runId]).sort().reverse());
    for (const limit of [1, 2, 3]) {
      const paged = [];
      for (let page = await client.list({ limit }); ; page = await client.list({ limit, cursor: page.nextCursor })) {
        paged.push(...page.runs);
        if (!page.nextCursor) break;
      }
      expect(ids(paged), `pages of ${limit}`).toEqual(ids(whole));
    }
    // A cursor is stable: the same page again, after a newer run too.
    const cursor = (await client.list({ limit: 2 })).nextCursor;
    const again = await client.list({ limit: 2, cursor });
    await client.start({ agent: 'support-triage', input: { inbox: 'later@acme.example' }, runId: 'agents-page-later', config: { approvalTimeoutSeconds: 3600 } });
    const later = await client.list({ limit: 2, cursor });
    expect([ids(later.runs), later.nextCursor]).toEqual([ids(again.runs), again.nextCursor]);
    expect(ids(again.runs)).toEqual(ids(whole.slice(2, 4)));
    // The runs still going, cancelled (one may end by itself first: 409).
    for (const run of (await client.list({ status: 'running', limit: 100 })).runs) await client.cancel(run.runId).catch((error: { status?: number }) => expect(error.status).toBe(409));
    expect((await client.list({ status: 'running' })).runs).toEqual([]);
    // The global kill switch stops every agent's runs, the second agent's too.
    expect((await savepoint(['--state-dir', stateDir, 'kill', '--all', '--reason', 'maintenance'])).code).toBe(0);
    await client.start({ agent: 'support-triage', input: { inbox: 'killed@acme.example' }, runId: 'agents-killed' });
    expect(await client.wait('agents-killed')).toMatchObject({ lifecycle: 'cancelled', report: { status: 'killed' } });
    expect((await savepoint(['--state-dir', stateDir, 'kill', '--all', '--lift'])).code).toBe(0);
    // A batch goes through the same port to the agent it names, and its progress to the engine that holds it.
    // (Of a manifest its engine's S3 does not hold: its execution fails reading it, and starts no run the rest of this test would meet.)
    await expect(client.startBatch({ items: [{ inbox: 'a@acme.example' }] })).rejects.toMatchObject({ status: 400, message: 'agent: this serve runs refund-reconciler, support-triage: name one' });
    const manifest = { bucket: 'savepoint-local', key: 'front/none.json', format: 'json' } as const;
    const started = await client.startBatch({ agent: 'support-triage', manifest, batchId: 'front-batch' });
    expect(started).toMatchObject({ batchId: 'front-batch', agent: 'support-triage', created: true, manifest, runs: [] });
    expect(await client.batch('front-batch')).toMatchObject({ batchId: 'front-batch', agent: 'support-triage', manifest });
    expect(await client.batch('no-such-batch')).toBeUndefined();
    // A manifest under the state directory's S3 (the batch command's help: <state dir>/s3/savepoint-local/) is read by
    // the second agent's batch too, as one account's bucket is by every agent on AWS. (Its one item is not an input of
    // the agent: refused, no run starts.)
    // (A key's "/" is "%2F" in its file's name: local/services/s3.ts.)
    mkdirSync(join(stateDir, 's3', 'savepoint-local'), { recursive: true });
    writeFileSync(join(stateDir, 's3', 'savepoint-local', 'front%2Finboxes.json'), JSON.stringify([{ inbox: 5 }]));
    const read = await client.startBatch({ agent: 'support-triage', manifest: { bucket: 'savepoint-local', key: 'front/inboxes.json' }, batchId: 'front-read' });
    expect(read).not.toHaveProperty('runsUnlisted');
    expect(read.runs).toEqual([{ runId: 'front-read-0', status: 'refused', reason: expect.stringMatching(/^invalid input of agent support-triage: inbox: /) }]);
    // A run of the second agent left waiting for a person when serve stops.
    await client.start({ agent: 'support-triage', input: { inbox: 'support@acme.example' }, runId: 'agents-waiting', config: { approvalTimeoutSeconds: 3600 } });
    expect(await client.wait('agents-waiting', { untilInput: true })).toMatchObject({ lifecycle: 'input_required' });
    const [pending] = await client.approvals('agents-waiting');

    serving.child.kill('SIGTERM');
    expect(await serving.exited).toBe(0);

    // With serve stopped, the commands open each agent's ledger themselves, and see both agents' runs too.
    const stoppedRuns = await savepoint(['--state-dir', stateDir, 'runs', '--json']);
    expect(stoppedRuns.code, stoppedRuns.stderr).toBe(0);
    expect(new Set((JSON.parse(stoppedRuns.stdout) as { runs: { agent: string }[] }).runs.map((run) => run.agent))).toEqual(new Set(['refund-reconciler', 'support-triage']));
    const standalone = spawn(process.execPath, [new URL('../../bin/savepoint.js', import.meta.url).pathname, '--state-dir', stateDir, 'console'], { stdio: ['ignore', 'pipe', 'pipe'] });
    children.add(standalone);
    const printed = await new Promise<string>((resolve, reject) => {
      let output = '';
      standalone.stdout.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        const url = /^savepoint: console (\S+)$/m.exec(output)?.[1];
        if (url) resolve(url);
      });
      standalone.on('close', (code) => reject(new Error(`console exited ${code}: ${output}`)));
    });
    const standaloneUrl = new URL(printed);
    const listedThere = (await (await fetch(new URL('/api/runs', standaloneUrl.origin), { headers: { 'x-savepoint-token': standaloneUrl.hash.slice('#token='.length) } })).json()) as { runs: { runId: string }[] };
    expect(listedThere.runs.map((run) => run.runId).sort()).toEqual(ids(whole).concat('agents-page-later', 'agents-killed', 'agents-waiting').sort());
    const closed = new Promise((resolve) => standalone.once('close', resolve));
    standalone.kill('SIGTERM');
    await closed;

    // With serve stopped, the commands that change a run reach the second agent's ledger too: a
    // decision, a fork (run in that agent's directory, where its parent's records are), a prune.
    const approved = await savepoint(['--state-dir', stateDir, 'approve', pending!.approvalId, '--reason', 'checked offline']);
    expect(approved.code, approved.stderr).toBe(0);
    expect(approved.stdout).toBe(`${pending!.approvalId}: approved (recorded; the run continues when it resumes)\n`);
    const breakers = await savepoint(['--state-dir', stateDir, 'breakers', '--json']);
    expect((JSON.parse(breakers.stdout) as { breakers: { name: string }[] }).breakers.map((breaker) => breaker.name)).toEqual(expect.arrayContaining(['tools:refund-reconciler', 'tools:support-triage']));
    const triageTemplate = join(dirname(stateDir), 'triage-template.json');
    writeFileSync(triageTemplate, JSON.stringify(await cachedTemplate('support-triage')));
    const forkedHere = await savepoint(['--state-dir', stateDir, 'fork', 'agents-triage', '--at', '1', '--effects', 'dry', '--run-id', 'agents-triage-cli-fork', '--approve', 'approve', '--template', triageTemplate, '--json']);
    expect(forkedHere.code, forkedHere.stderr).toBe(0);
    expect(JSON.parse(forkedHere.stdout)).toMatchObject({ runId: 'agents-triage-cli-fork', agent: 'support-triage', status: 'succeeded' });
    const forkStatus = await savepoint(['--state-dir', join(stateDir, 'agents', 'support-triage'), 'status', 'agents-triage-cli-fork', '--json']);
    expect(forkStatus.code, forkStatus.stderr).toBe(0);
    expect(JSON.parse(forkStatus.stdout)).toMatchObject({ runId: 'agents-triage-cli-fork', agent: 'support-triage' });
    // The engine the fork started there resumed the run left waiting, and delivered the decision
    // recorded for it: signed with the state directory's key, which the agent's engine verifies
    // (its call approved, not refused as approval_unverified).
    const waitingThen = await savepoint(['--state-dir', stateDir, 'status', 'agents-waiting', '--json']);
    expect(JSON.parse(waitingThen.stdout)).toMatchObject({ runId: 'agents-waiting', agent: 'support-triage', status: 'succeeded', approvals: { unverified: 0 } });
    expect(JSON.parse(waitingThen.stdout).approvals.approved).toBeGreaterThanOrEqual(1);
    const prune = await savepoint(['--state-dir', stateDir, 'prune', '--finished-before', '2999-01-01', '--json']);
    expect(prune.code, prune.stderr).toBe(0);
    const prunedIds = (JSON.parse(prune.stdout) as { pruned: { runIds: string[] }[] }).pruned.flatMap((record) => record.runIds);
    // And their executions' lines from each agent's history.jsonl: every run went, so every line did.
    expect((JSON.parse(prune.stdout) as { historyLinesRemoved: number }).historyLinesRemoved).toBeGreaterThan(100);
    expect([stateDir, join(stateDir, 'agents', 'support-triage')].map((dir) => readFileSync(join(dir, 'history.jsonl'), 'utf8'))).toEqual(['', '']);
    // Every run has ended: each agent's ledger pruned of all.
    expect(prunedIds.sort()).toEqual([...ids(whole), 'agents-page-later', 'agents-killed', 'agents-waiting', 'agents-triage-cli-fork'].sort());
    const afterPrune = await savepoint(['--state-dir', stateDir, 'runs', '--json']);
    expect((JSON.parse(afterPrune.stdout) as { runs: unknown[] }).runs).toEqual([]);
  }, 300_000);
});
