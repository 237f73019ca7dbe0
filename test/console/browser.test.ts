import { screenshotPath } from '../support/screenshots.js';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import type { SavepointClient } from '../../client/ledger-client.js';
import { stackClient } from '../support/agent-harness.js';
import { startLocalConsole } from '../../console/local.js';
import type { ConsoleServer } from '../../console/server.js';
import { duplicatePayments, sampleInput, startHarness, type Harness } from '../support/refund-harness.js';
import type { Ledger } from '../../lambdas/ledger/ledger.js';

/**
 * The console in a real browser (Debian's headless Chromium through playwright-core) against the
 * real local stack running the refund agent: watch a run, approve from the page, kill from the page.
 */
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
if (!haveChromium) console.warn(`browser tests skipped: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH)`);

let harness: Harness;
let client: SavepointClient;
let server: ConsoleServer;
let browser: Browser;
let page: Page;
const RUN = 'refunds-2026-11-28';
const KILLED_RUN = 'console-kill';
/** Holds the run to be killed, once it has counted three steps, at its next model call's reservation (a countStep) until the test has killed it from the page: no race with the engine's speed. */
let releaseKilledRun!: () => void;
const killRecorded = new Promise<void>((resolve) => (releaseKilledRun = resolve));

function holdingKilledRun(ledger: Ledger): Ledger {
  return new Proxy(ledger, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property !== 'countStep') return (value as (...args: unknown[]) => unknown).bind(target);
      // Every argument passed on: a reservation counts the last turn's calls with it (its fourth).
      return async (...args: Parameters<Ledger['countStep']>) => {
        const [runId] = args;
        const counted = await target.countStep(...args);
        if (runId === KILLED_RUN && (await target.getRun(runId))!.steps >= 3) await killRecorded;
        return counted;
      };
    },
  });
}

// In order, as a person uses the page: the second run reads the refunds the first paid, and the last test stops the console's server.
describe.skipIf(!haveChromium)('the console in a browser', { shuffle: false }, () => {
  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    [harness, browser] = await Promise.all([startHarness({ decorateLedger: holdingKilledRun }), chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })]);
    server = await startLocalConsole(harness.stack);
    client = stackClient(harness.stack);
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    // Waits are on page conditions; a run on this shared machine takes its time between two approvals.
    page.setDefaultTimeout(150_000);
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await harness?.stack.close();
  });

  it('lists a run waiting for approval, shows its steps so far, approves it from the page, and shows it succeeded with each refund paid once', async () => {
    await client.start({ input: sampleInput, config: { approvalTimeoutSeconds: 3600 } });
    const waiting = await client.wait(RUN, { untilInput: true });
    expect(waiting.lifecycle).toBe('input_required');

    // The list: the run, waiting for a person.
    await page.goto(server.url);
    const row = page.locator(`tr[data-run="${RUN}"]`);
    await row.locator('[data-testid=run-status]', { hasText: 'input_required' }).waitFor();
    await expect(row.textContent()).resolves.toContain('1 approval');
    // The token left the address bar once the page kept it (in this tab's storage, not a cookie),
    // and the live stream opened with a ticket.
    expect(page.url()).toBe(`${server.origin}/#/`);
    expect(await page.evaluate(() => sessionStorage.getItem('savepoint-token'))).toBe(server.token);
    expect(await page.context().cookies()).toEqual([]);
    await page.locator('#live.on').waitFor();

    // The run: its timeline holds every step taken so far, and the approval it waits for.
    await row.locator('a').click();
    await page.locator('[data-testid=approval]').first().waitFor();
    const steps = (await client.status(RUN))!.report.steps;
    expect(await page.locator('[data-testid=timeline] > li[data-step]').count()).toBe(steps);
    await expect(page.locator('[data-testid=timeline]').textContent()).resolves.toContain('list_refund_requests');
    await page.locator('[data-testid=state-machine] [data-state=RequestApproval] rect.current').waitFor();
    await page.screenshot({ path: screenshotPath('console-run.png'), fullPage: false });

    // Approve every approval from the page, each after its confirmation, until the run is done.
    const approvedIds: string[] = [];
    for (;;) {
      const next = page.locator('[data-testid=approve], [data-testid=run-status]:text-is("succeeded")').first();
      await next.waitFor();
      if ((await next.getAttribute('data-testid')) !== 'approve') break;
      const card = page.locator('[data-testid=approval]').first();
      const approvalId = (await card.getAttribute('data-approval'))!;
      await card.locator('[data-testid=approve]').click();
      await page.locator('[data-testid=confirm-dialog]').waitFor();
      await page.locator('[data-testid=confirm-ok]').click();
      await page.locator('[data-testid=notice]', { hasText: `Approval ${approvalId}: approved` }).waitFor();
      await page.locator(`[data-approval="${approvalId}"]`).waitFor({ state: 'detached' });
      approvedIds.push(approvalId);
    }
    expect(approvedIds.length).toBeGreaterThanOrEqual(1);
    await page.locator('[data-testid=run-lifecycle]', { hasText: 'completed' }).waitFor();
    // The view followed the run through its event stream (the runs API's), to the run's last event.
    await page.locator(`#main[data-following="${RUN}"][data-last-event="z.run"]`).waitFor();

    const done = await client.wait(RUN);
    expect(done.report).toMatchObject({ status: 'succeeded', approvals: { approved: approvedIds.length, pending: 0 } });
    // Every refund the provider paid, it paid once; the approved ones among them.
    expect(duplicatePayments(harness.stack)).toEqual([]);
    const paid = harness.stack.world.payments.refunds();
    expect(paid.length).toBe(done.report.summary?.['issued']);
    // The page shows every step, the decisions by the console, and one idempotency key per write.
    await page.locator('[data-testid=timeline] > li[data-step]').nth(done.report.steps - 1).waitFor();
    expect(await page.locator('[data-testid=timeline] > li[data-step]').count()).toBe(done.report.steps);
    await expect(page.locator('[data-testid=timeline]').textContent()).resolves.toMatch(/approved by local:/);
    expect(await page.locator('[data-testid=idempotency-key]').count()).toBeGreaterThanOrEqual(paid.length);
  }, 240_000);

  it('kills a second run from the page while it works: it stops within one step', async () => {
    // The same day again under another run id: the refunds are paid already, so it reads and skips (no approval).
    const runId = KILLED_RUN;
    await client.start({ runId, input: sampleInput, config: { approvalTimeoutSeconds: 3600 } });
    await page.goto(`${server.origin}/#/run/${runId}`);
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=timeline] > li[data-step]').length >= 3);
    await page.locator('[data-testid=kill-run]').click();
    await page.locator('#confirm-reason').fill('wrong day');
    await page.locator('[data-testid=confirm-ok]').click();
    await page.locator('[data-testid=notice]', { hasText: `Run ${runId}: killed` }).waitFor();
    releaseKilledRun();
    await page.locator('[data-testid=run-status]', { hasText: 'killed' }).waitFor();

    const stopped = await client.wait(runId);
    expect(stopped).toMatchObject({ lifecycle: 'cancelled', report: { status: 'killed', killed: { reason: 'wrong day', by: expect.stringMatching(/^local:/) } } });
    expect(stopped.report.steps).toBeGreaterThanOrEqual(3);
    // At most the step in flight when the kill was recorded finished after it.
    const killedAt = Date.parse(stopped.report.killed!.at);
    const { turns, calls } = await harness.stack.ledger.listConversation(runId);
    const after = [...turns, ...calls].filter((step) => !step.recordedAt || Date.parse(step.recordedAt) > killedAt);
    expect(after.length).toBeLessThanOrEqual(1);
    await expect(page.locator('[data-testid=timeline]').textContent()).resolves.toContain('wrong day');
    expect(duplicatePayments(harness.stack)).toEqual([]);

    // Both runs in the list: one succeeded, one killed.
    await page.goto(`${server.origin}/#/`);
    await page.locator(`tr[data-run="${runId}"] [data-testid=run-status]`, { hasText: 'killed' }).waitFor();
    await page.locator(`tr[data-run="${RUN}"] [data-testid=run-status]`, { hasText: 'succeeded' }).waitFor();
    await page.screenshot({ path: screenshotPath('console-runs.png') });
  }, 180_000);

  it('refuses a POST from the page without the token, and from a foreign origin', async () => {
    // From the console's own page, without its token (a fresh context: its storage is empty).
    const context = await browser.newContext();
    const stranger = await context.newPage();
    await stranger.goto(`${server.origin}/`);
    const withoutToken = await stranger.evaluate(async () => (await fetch('/api/kill-all', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"on":true}' })).status);
    expect(withoutToken).toBe(403);
    await context.close();
    // From another origin, with the token (as a page that learnt it could try): refused on the Origin.
    const foreign = await fetch(`${server.origin}/api/kill-all`, {
      method: 'POST',
      headers: { 'x-savepoint-token': server.token, origin: 'http://evil.example', 'content-type': 'application/json' },
      body: '{"on":true}',
    });
    expect(foreign.status).toBe(403);
    expect(await harness.stack.ledger.getGlobalKill()).toBeUndefined();
  });

  // Last: it stops the console's server.
  it("says the console's server has stopped, not the browser's \"Failed to fetch\", once the engine serving it is gone", async () => {
    await page.goto(`${server.url}`);
    await page.waitForSelector('[data-run]');
    await server.close();
    await page.evaluate(() => (location.hash = '#/gone'));
    const said = await page.waitForSelector('#main p.error');
    expect(await said.textContent()).toBe(
      "the console's server has stopped: the `savepoint run` that served it ended (its run finished, was stopped or killed). `savepoint console` serves the state directory.",
    );
  });
});
