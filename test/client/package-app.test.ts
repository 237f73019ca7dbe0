import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CreateTaskResultSchema } from '@modelcontextprotocol/sdk/experimental/tasks';
import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import { readmeFiles, snippet } from '../readme/readme-text.js';
import { connect } from '../../client/index.js';
import { openLedger } from '../../cli/state.js';
import { readRunRecords, settledEvents, type RunEvent } from '../../lambdas/runs/events.js';
import { cachedTemplate } from '../../local/template/cache.js';
import { duplicates } from '../support/cli-process.js';
import { onPath } from '../support/on-path.js';
import { installApp, pinned } from '../support/pack.js';
import { sampleDay } from '../support/refund-harness.js';
import { refundReconciler } from '../../agents/refund-reconciler/agent.js';

/**
 * Applications outside the repository, with savepoint installed from `npm pack` (its `exports` are
 * the public API; the template handed over as `cdk synth` writes it, so they need no CDK), each on
 * a `savepoint serve` of the installed package: one starts a run with the public client and waits
 * for it (`connect({ stateDir })` finds the address and credential serve published); one starts a
 * run and follows `client.events`; the test SIGKILLs serve mid-stream and starts it again. The
 * application's iterator resumes by itself: the events it printed are the run's full list exactly
 * once, the run finished once, and the provider's journal shows each refund once; an MCP host
 * runs `savepoint mcp` as the README configures it; the README's application and curl session
 * (with its resume) run as written, in a directory with serve on ./.savepoint, and so do
 * docs/applications.md's and docs/mcp.md's programs. One install serves them all.
 */
const exec = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'savepoint-package-app-'));
const app = join(work, 'app');
const children = new Set<ChildProcess>();
afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await rm(work, { recursive: true, force: true });
}, 60_000);

/** The README's curl session runs in bash with curl: without them that test skips itself, as CI installs both (.ci/run). */
const haveCurl = onPath('bash') && onPath('curl');
if (!haveCurl) console.warn("the README's curl session skipped: no bash or curl on PATH");

const eventIds = (output: string) => [...output.matchAll(/^id: (.+)$/gm)].map((match) => match[1]!);

/** An application that starts a run, waits for it, and starts it again (nothing is started twice). */
const WAITING_APP = `
import { connect } from 'savepoint/client';
const [stateDir, date] = process.argv.slice(2);
const client = await connect({ stateDir });
const started = await client.start({ agent: 'refund-reconciler', input: { date }, runId: 'from-an-app', config: { approvalTimeoutSeconds: 1 } });
const run = await client.wait(started.runId);
const again = await client.start({ agent: 'refund-reconciler', input: { date }, runId: 'from-an-app' });
console.log(JSON.stringify({ started, again, lifecycle: run.lifecycle, status: run.report.status, listed: (await client.list()).runs.map((listed) => listed.runId) }));
`;

/**
 * The application: each event as a JSON line; it approves what waits, through whichever serve runs
 * now (its one client carries a decision through a restart), each once its stdin says to (a line):
 * the test decides when, serve running or not.
 */
const APP = `
import { createInterface } from 'node:readline';
import { connect } from 'savepoint/client';
const [stateDir, date] = process.argv.slice(2);
const go = createInterface({ input: process.stdin })[Symbol.asyncIterator]();
const client = await connect({ stateDir });
await client.start({ agent: 'refund-reconciler', input: { date }, runId: 'followed-from-an-app', config: { approvalTimeoutSeconds: 3600 } });
for await (const event of client.events('followed-from-an-app')) {
  console.log(JSON.stringify(event));
  if (event.type === 'approval.waiting') {
    await go.next();
    await client.decide(String(event.data.approvalId), 'approve', { reason: 'checked' });
  }
}
process.exit(0); // stdin is still open
`;

/**
 * The bound of the test whose app follows a run across serve's SIGKILL: its run takes 2 s on an
 * idle machine, and the serve's restart a few more in a full suite. Past it the test fails, and
 * prints what the app saw (a stream that stopped delivering once hung here for 10 min).
 */
const FOLLOW_BOUND_MS = 120_000;

/**
 * Why a following app did not end: the events it printed, whether serve was killed yet, what a new
 * follower gets from serve now (the run's events as serve has them), and the app's requests
 * (its stderr: NODE_DEBUG=fetch) beside serve's last lines.
 */
async function notEnded(got: readonly RunEvent[], killed: boolean, stderr: string, serveOutput: string, pid: number | undefined): Promise<string> {
  // The app's connections as they are at the bound, before the new follower's is opened beside them.
  const connections = connectionsOf(pid);
  const fresh: { id: string; type: string }[] = [];
  let failed = '';
  try {
    const client = await connect({ stateDir: join(app, '.savepoint') });
    for await (const event of client.events('followed-from-an-app', { signal: AbortSignal.timeout(5_000) })) fresh.push(event);
  } catch (error) {
    failed = ` (then: ${String(error)})`;
  }
  const ids = (events: readonly { id: string; type: string }[]) => (events.length <= 8 ? events : events.slice(-8)).map((event) => `${event.id} ${event.type}`).join(', ');
  return [
    `app.mjs had not ended in ${FOLLOW_BOUND_MS / 1000} s: it printed ${got.length} events${got.length > 8 ? ', the last' : ''}: ${ids(got) || 'none'}`,
    killed ? 'serve was SIGKILLed (at the first approval.waiting, the app told to decide it then) and started again' : 'serve was not SIGKILLed (that waits for the first approval.waiting)',
    `a new follower gets ${fresh.length} events now${fresh.length > 8 ? ', the last' : ''}: ${ids(fresh) || 'none'}${failed}`,
    `app.mjs's TCP connections, both ends (ss: queues, bytes, ms since each end last sent and received):\n${connections}`,
    `app.mjs's stderr:\n${stderr.slice(-4_000)}`,
    `serve's output (its end):\n${serveOutput.slice(-2_000)}`,
  ].join('\n');
}

/**
 * The TCP connections of process `pid` and their other ends, as the kernel has them (`ss -tnpi`,
 * where it exists): whether bytes still arrive on a stream that delivers no events (a heartbeat
 * every 15 s), or none at all.
 */
function connectionsOf(pid: number | undefined): string {
  let lines: string[];
  try {
    lines = execFileSync('ss', ['-tnpi'], { encoding: 'utf8', timeout: 5_000 }).split('\n');
  } catch (error) {
    return `(no ss: ${String(error)})`;
  }
  const entries = lines.flatMap((line, index) => (/^ESTAB/.test(line) ? [{ fields: line.trim().split(/\s+/), info: lines[index + 1] ?? '' }] : []));
  const own = entries.filter((entry) => entry.fields.some((field) => field.includes(`pid=${pid},`)));
  const ends = new Set(own.flatMap((entry) => [entry.fields[3], entry.fields[4]]));
  const shown = entries.filter((entry) => ends.has(entry.fields[3]) && ends.has(entry.fields[4]));
  const figures = (info: string) => ['bytes_sent', 'bytes_received', 'lastsnd', 'lastrcv'].map((name) => new RegExp(`\\b${name}:\\d+`).exec(info)?.[0]).filter(Boolean).join(' ');
  return shown.map((entry) => `${entry.fields.slice(1, 5).join(' ')} ${entry.fields[5] ?? ''} ${figures(entry.info)}`).join('\n') || 'none';
}

/** An app that starts the run it is given on ./.savepoint's serve and approves what waits, until the run has ended. */
const SESSION_RUN = `
import { connect } from 'savepoint/client';
const [runId, date] = process.argv.slice(2);
const client = await connect({ stateDir: '.savepoint' });
await client.start({ agent: 'refund-reconciler', input: { date }, runId });
let run = await client.wait(runId, { untilInput: true });
while (run.lifecycle === 'input_required') {
  for (const approval of run.approvals) await client.decide(approval.approvalId, 'approve');
  run = await client.wait(runId, { untilInput: true });
}
console.log(run.lifecycle);
`;

/**
 * What the tests share, made by the first that needs it (the tests of this file run one after
 * another): a serve that several tests use, one a state directory rather than one a test (each
 * start of the CLI and its engine is over half a second of CPU); the last of them stops it
 * (SIGTERM, exit 0), or the file's cleanup does when it runs alone.
 */
function shared<T>(make: () => Promise<T>): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= make());
}

/** A directory of the app with the installed serve on ./.savepoint in it, as the guides' programs and commands expect: the README's application, the events application and the curl session run there, and the waiting application on it too. */
const docsDirectory = shared(async () => {
  const dir = join(app, 'docs');
  mkdirSync(dir);
  const serve = startServe('.savepoint', dir);
  await serve.ready;
  return { dir, serve };
});

const docsRuns = new Map<string, Promise<void>>();
/**
 * The run `runId` of the sample day, finished on the docs directory's serve (started, and its
 * approvals decided, by an app with the installed client): the run the guides' events application
 * and curl session follow (both name it), made once.
 */
async function docsRun(runId: string): Promise<string> {
  const { dir } = await docsDirectory();
  if (!docsRuns.has(runId)) {
    const made = (async () => {
      writeFileSync(join(dir, 'session-run.mjs'), SESSION_RUN);
      const { stdout } = await exec(process.execPath, ['session-run.mjs', runId, sampleDay.date], { cwd: dir, timeout: 120_000 });
      expect(stdout.trim()).toBe('completed');
    })();
    docsRuns.set(runId, made);
  }
  await docsRuns.get(runId);
  return dir;
}

/** The id of the run the README's application starts: the agent names a run by its input (its `runId`). */
function readmeAppRunId(): string {
  const date = /input: \{ date: '([\d-]+)' \}/.exec(readmeFiles()['runs-app.ts']!)![1]!;
  return refundReconciler.runId!({ date });
}

/** The serve the MCP tests' hosts reach, on .savepoint-mcp in the app. */
const mcpServe = shared(async () => {
  const serve = startServe('.savepoint-mcp');
  await serve.ready;
  return serve;
});

/** The installed package's `savepoint serve` in the app (or in a directory of it: `cwd`), on its own state directory. */
function startServe(stateDir = '.savepoint', cwd = app): { child: ChildProcess; ready: Promise<void>; exited: Promise<number | null>; output: () => string } {
  const args = ['--state-dir', stateDir, 'serve', '--agent', 'refund-reconciler', '--template', join(app, 'template.json'), '--world-data', join(app, 'day.json')];
  const child = spawn(process.execPath, [join(app, 'node_modules/.bin/savepoint'), ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (/^savepoint: ready$/m.test(output)) resolve();
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    void exited.then((code) => reject(new Error(`serve exited ${code}:\n${output}`)));
  });
  ready.catch(() => undefined); // awaited where it matters; a serve killed by the cleanup is no failure
  return { child, ready, exited, output: () => output };
}

// In order: the README's application, curl session and MCP host run on the serve an earlier test started.
describe('an application from npm pack, on savepoint serve', { shuffle: false }, () => {
  // One install for both tests: savepoint from npm pack, the sample day, the template as `cdk synth` writes it.
  beforeAll(async () => {
    await installApp(app, { name: 'events-app', dependencies: pinned('aws-local-stepfunctions', 'esbuild') }, 300_000);
    writeFileSync(join(app, 'app.mjs'), APP);
    writeFileSync(join(app, 'waiting-app.mjs'), WAITING_APP);
    writeFileSync(join(app, 'template.json'), JSON.stringify(await cachedTemplate('refund-reconciler')));
    copyFileSync(new URL('../../agents/refund-reconciler/sample-day.json', import.meta.url), join(app, 'day.json'));
  }, 600_000);

  it('starts a run with the public client and waits for it to finish', async () => {
    // On the docs directory's serve (the first test of the file: its run the only one there yet); the last test there stops it.
    const { dir } = await docsDirectory();
    const { stdout } = await exec(process.execPath, ['waiting-app.mjs', join(dir, '.savepoint'), sampleDay.date], { cwd: app, timeout: 120_000 });
    const result = JSON.parse(stdout) as Record<string, any>;
    expect(result['started']).toMatchObject({ runId: 'from-an-app', agent: 'refund-reconciler', created: true, startedBy: expect.stringMatching(/^local:/) });
    expect(result['again']).toMatchObject({ runId: 'from-an-app', created: false, lifecycle: 'completed' });
    expect(result).toMatchObject({ lifecycle: 'completed', status: 'succeeded', listed: ['from-an-app'] });
  }, 300_000);

  it('resumes client.events by itself after serve was SIGKILLed mid-stream and started again, and delivers the decision the app sent while none ran: every event once, each refund once', async () => {
    let serve = startServe();
    await serve.ready;
    // NODE_DEBUG=fetch: the app's requests and their ends on its stderr, for a failure to show.
    const follower = spawn(process.execPath, ['app.mjs', '.savepoint', sampleDay.date], { cwd: app, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_DEBUG: 'fetch' } });
    children.add(follower);
    const got: RunEvent[] = [];
    let stderr = '';
    follower.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    const followed = new Promise<number | null>((resolve) => follower.on('close', (code) => resolve(code)));
    let buffered = '';
    let killed: Promise<void> | undefined;
    follower.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      for (const line of lines) {
        const event = JSON.parse(line) as RunEvent;
        got.push(event);
        if (event.type !== 'approval.waiting') continue;
        // Mid-run, at the first approval (event 60 of the sample day's run): killed, the app told
        // to decide it while no serve runs, and serve started again. Its decision is asked again
        // until the new serve takes it (client.decide through a restart), and the run goes on.
        // The next approvals, decided at once.
        if (killed) {
          follower.stdin!.write('go\n');
          continue;
        }
        killed = (async () => {
          serve.child.kill('SIGKILL');
          await serve.exited;
          follower.stdin!.write('go\n');
          serve = startServe();
          await serve.ready;
        })();
      }
    });
    // Past the test's bound (FOLLOW_BOUND_MS), with the app still running: what it had seen. The new
    // follower asks while the app is still connected: a stream that stopped delivering is compared
    // with one on the same feed.
    onTestFailed(async () => {
      if (follower.exitCode !== null || follower.signalCode !== null) return;
      console.error(await notEnded([...got], killed !== undefined, stderr, serve.output(), follower.pid));
      follower.kill('SIGKILL');
    }, 30_000);
    expect(await followed, stderr).toBe(0);
    await killed;
    expect(got.at(-1)).toMatchObject({ id: 'z.run', type: 'run.finished', data: { status: 'succeeded' } });
    expect(new Set(got.map((event) => event.id)).size).toBe(got.length);

    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    const stateDir = join(app, '.savepoint');
    const { ledger, close } = await openLedger(stateDir);
    try {
      const records = (await readRunRecords(ledger, 'followed-from-an-app'))!;
      expect(got).toEqual(settledEvents(records));
      expect(records.run.executions.length).toBeGreaterThanOrEqual(2); // taken over after the kill
      // The decision sent while no serve ran, recorded once, as the app sent it.
      expect(records.approvals.map((approval) => [approval.status, approval.reason])).toEqual([['approved', 'checked'], ['approved', 'checked']]);
    } finally {
      await close();
    }
    expect(duplicates(stateDir)).toEqual([]);
  }, FOLLOW_BOUND_MS);

  it("serves the agent to an MCP host configured as the README shows: the host's command, from the installed package, runs a task to its end", async () => {
    // The configuration as the guide prints it, run as a host runs it: its command and args, in the app.
    const { command, args } = (JSON.parse(snippet('mcp-host-config')) as { mcpServers: Record<string, { command: string; args: string[] }> }).mcpServers['savepoint']!;
    expect([command, ...args]).toEqual(['npx', 'savepoint', '--state-dir', '.savepoint', 'mcp', '--agent', 'refund-reconciler']);
    args[args.indexOf('.savepoint')] = '.savepoint-mcp'; // the MCP tests' state directory
    await mcpServe();
    const mcp = new Client({ name: 'package-mcp-host', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    mcp.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { decision: 'approve', reason: 'checked' } }));
    await mcp.connect(new StdioClientTransport({ command, args, cwd: app, stderr: 'pipe' }));
    expect((await mcp.listTools()).tools.map((tool) => tool.name)).toEqual(['refund-reconciler']);
    const { task } = await mcp.request({ method: 'tools/call', params: { name: 'refund-reconciler', arguments: { date: sampleDay.date }, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
    const result = await mcp.experimental.tasks.getTaskResult(task.taskId, CallToolResultSchema);
    expect(result.structuredContent).toMatchObject({ runId: task.taskId, status: 'succeeded' });
    await mcp.close();
  }, 300_000);

  it("runs docs/mcp.md's own server (savepointMcpServer in front of connect) as an MCP host would", async () => {
    // The guide's snippet as written (plain JavaScript as well as TypeScript), in the app.
    writeFileSync(join(app, 'mcp-server.mjs'), readmeFiles()['mcp-server.ts']!.replace("'.savepoint'", "'.savepoint-mcp'"));
    const serve = await mcpServe();
    const mcp = new Client({ name: 'package-mcp-host', version: '1.0.0' });
    await mcp.connect(new StdioClientTransport({ command: process.execPath, args: ['mcp-server.mjs'], cwd: app, stderr: 'pipe' }));
    const { tools } = await mcp.listTools();
    expect(tools).toMatchObject([{ name: 'refund-reconciler', description: "Reconciles a day's refunds.", execution: { taskSupport: 'required' } }]);
    const { task } = await mcp.request({ method: 'tools/call', params: { name: 'refund-reconciler', arguments: { date: sampleDay.date }, task: { ttl: 60_000 } } }, CreateTaskResultSchema);
    expect((await mcp.experimental.tasks.cancelTask(task.taskId)).status).toBe('cancelled');
    await mcp.close();
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
  }, 300_000);

  it("runs the README's application as written, in a directory with serve on ./.savepoint: it starts a run, decides what waits, and ends completed", async () => {
    const { dir } = await docsDirectory();
    writeFileSync(join(dir, 'runs-app.mjs'), readmeFiles()['runs-app.ts']!);
    const { stdout } = await exec(process.execPath, ['runs-app.mjs'], { cwd: dir, timeout: 120_000 });
    expect(stdout.trim()).toBe('completed');
  }, 300_000);

  it.skipIf(!haveCurl)("runs the README's curl session as written, in a directory with serve on ./.savepoint: the whole stream, then a resume exactly after the event it names, by Last-Event-ID and by ?after=", async () => {
    const block = snippet('run-events-curl');
    const [assign, whole, byHeader, byQuery, ...more] = block.split('\n').filter((line) => line.trim() !== '' && !line.startsWith('#'));
    expect(more).toEqual([]);
    // The run the session follows is the one the README's application just above it starts (a user
    // runs them in that order), started here (and its approvals decided) by an app with the installed client.
    const runId = /\$API\/([^/]+)\/events/.exec(whole!)![1]!;
    expect(runId).toBe(readmeAppRunId());
    const dir = await docsRun(runId);

    // Each command as the guide writes it, run by bash in that directory.
    const sh = (command: string) => execFileSync('bash', ['-c', `set -euo pipefail; ${assign}; ${command}`], { cwd: dir, encoding: 'utf8', timeout: 30_000 });
    const ids = (output: string) => [...output.matchAll(/^id: (.+)$/gm)].map((match) => match[1]!);
    const all = ids(sh(whole!));
    expect(all[0]).toBe('a.run');
    expect(all.at(-1)).toBe('z.run');
    // Every id the session shows is one the run has; the resume gives exactly the events after the one it names.
    for (const shown of ids(block.replace(/^# /gm, ''))) expect(all).toContain(shown);
    const resumedAt = /Last-Event-ID: ([^']+)'/.exec(byHeader!)![1]!;
    const after = all.slice(all.indexOf(resumedAt) + 1);
    expect(after.length).toBeGreaterThan(1);
    expect(ids(sh(byHeader!))).toEqual(after);
    expect(ids(sh(byQuery!))).toEqual(after);
    expect(after[0]).toBe(/# id: (\S+)/.exec(block.slice(block.indexOf(byHeader!)))![1]);
  }, 300_000);

  it('runs the installed CLI from a bundle of its dist/, built once into the package\'s cache; a JavaScript agent shares its harness; SAVEPOINT_FROM_SOURCE=1 runs dist/ as it is, to the same end', async () => {
    // A JavaScript agent of the app's own: the shipped support-triage example, compiled file by file (its imports left as they are).
    const example = new URL('../../agents/support-triage/', import.meta.url).pathname;
    const esbuild = await import('esbuild');
    for (const file of readdirSync(example, { recursive: true }).map(String)) {
      const target = join(app, 'js-agent', file.replace(/\.ts$/, '.js'));
      mkdirSync(dirname(target), { recursive: true });
      if (file.endsWith('.ts')) writeFileSync(target, (await esbuild.transform(readFileSync(join(example, file), 'utf8'), { loader: 'ts', format: 'esm' })).code);
      else if (file.endsWith('.json')) copyFileSync(join(example, file), target);
    }
    const savepoint = (stateDir: string, env: NodeJS.ProcessEnv = {}) =>
      exec(process.execPath, [join(app, 'node_modules/.bin/savepoint'), '--state-dir', stateDir, 'run', '--agent', './js-agent/agent.js', '--approve', 'approve', '--json'], { cwd: app, env: { ...process.env, ...env }, timeout: 120_000 });
    const outcome = (stdout: string) => {
      const report = JSON.parse(stdout) as { status: string; steps: number };
      return [report.status, report.steps];
    };
    const bundled = outcome((await savepoint('.savepoint-js')).stdout);
    expect(bundled[0]).toBe('succeeded');
    // The CLI's bundle, in the installed package's own cache: the compiled entry points, not the sources it does not ship.
    const cache = join(app, 'node_modules/savepoint/node_modules/.cache/savepoint');
    const [cli, ...more] = readdirSync(cache).filter((name) => /^cli-[0-9a-f]+$/.test(name));
    expect(more).toEqual([]);
    expect(existsSync(join(cache, cli!, 'dist/cli/savepoint.js'))).toBe(true);
    // The agent bundled against it: its `savepoint` is the CLI bundle's entry, one instance of the harness.
    const agents = join(app, 'node_modules/.cache/savepoint');
    const agent = readdirSync(agents).filter((name) => name.startsWith('agent-')).map((name) => readFileSync(join(agents, name, 'agent.js'), 'utf8'));
    expect(agent).toHaveLength(1);
    expect(agent[0]).toContain(`from "file://${join(cache, cli!, 'dist/lambdas/index.js')}"`);
    // Without the bundle: the same run, to the same end, from dist/ and the agent's own files.
    expect(outcome((await savepoint('.savepoint-js-dist', { SAVEPOINT_FROM_SOURCE: '1' })).stdout)).toEqual(bundled);
  }, 300_000);

  // The last of the tests in the docs directory: it stops its serve, to read the ledger.
  it("runs docs/applications.md's events application as written: every event of the run the guide names, started to finished", async () => {
    const runId = /client\.events\('([^']+)'\)/.exec(readmeFiles()['events-app.ts']!)![1]!;
    expect(runId).toBe(readmeAppRunId());
    const dir = await docsRun(runId);
    writeFileSync(join(dir, 'events-app.mjs'), readmeFiles()['events-app.ts']!);
    const { stdout } = await exec(process.execPath, ['events-app.mjs'], { cwd: dir, timeout: 120_000 });
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('a.run run.started');
    expect(lines.at(-1)).toBe('z.run run.finished');
    expect(lines.filter((line) => line.endsWith(' model.turn')).length).toBeGreaterThan(5);
    // The records of the run, each once: what the ledger holds.
    const { serve } = await docsDirectory();
    serve.child.kill('SIGTERM');
    expect(await serve.exited).toBe(0);
    const { ledger, close } = await openLedger(join(dir, '.savepoint'));
    try {
      expect(lines).toEqual(settledEvents((await readRunRecords(ledger, runId))!).map((event) => `${event.id} ${event.type}`));
    } finally {
      await close();
    }
  }, 300_000);
});
