import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { refundReconciler } from '../../agents/refund-reconciler/agent.dev.js';
import { startLocalConsole } from '../../console/local.js';
import type { ConsoleServer } from '../../console/server.js';
import { verifyRun } from '../../lambdas/ledger/seal.js';
import { postDecision, startAgentHarness, waitFor } from '../support/agent-harness.js';
import { sampleInput, type Harness } from '../support/refund-harness.js';
import { screenshotPath } from '../support/screenshots.js';

/**
 * "Fork from here" in the console, in a real browser (Debian's headless Chromium through
 * playwright-core) against the local stack: on a finished run's timeline, a turn's button shows
 * the fork's hazard report before anything starts; confirmed, the fork starts and the page goes to
 * it, showing its parent; the parent's page then lists the fork. Nothing is paid twice.
 */
const CHROMIUM = [process.env['CHROMIUM_PATH'], '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => path && existsSync(path));
if (!CHROMIUM) console.warn('fork-from-here browser test SKIPPED: no chromium (apt-get install -y chromium, or set CHROMIUM_PATH)');

let harness: Harness;
let browser: Browser;
let server: ConsoleServer;

describe.skipIf(!CHROMIUM)('fork from here, in the console', () => {
  beforeAll(async () => {
    harness = await startAgentHarness({ agent: refundReconciler, onAsked: (approval, stack) => void postDecision(stack, approval.approvalId, { decision: 'approve', reason: 'test' }) });
    expect((await harness.run({ runId: 'day1', input: sampleInput })).status).toBe('SUCCEEDED');
    server = await startLocalConsole(harness.stack);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await server?.close();
    await harness?.stack.close();
  });

  it('shows the hazard report before it starts, starts the fork once confirmed, and links parent and fork', async () => {
    const paid = harness.stack.world.payments.refunds().length;
    const page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.setDefaultTimeout(60_000);
    await page.goto(server.url);
    await page.goto(`${server.origin}/#/run/day1`);
    const turn = page.locator('[data-testid=timeline] > li[data-turn="5"]');
    await turn.locator('[data-testid=fork-here]').click();

    // The report, and nothing started yet.
    const dialog = page.locator('[data-testid=confirm-dialog]');
    await dialog.waitFor();
    const report = (await page.locator('#confirm-text').textContent())!;
    expect(report).toMatch(/^fork of day1 at turn 5, effects reuse: the parent made \d+ writes from turn 5 on:\n {2}turn \d+ call \d+: issue_refund /);
    await page.screenshot({ path: screenshotPath('console-fork-report.png') });
    expect(await harness.stack.ledger.getRun('day1-fork-5')).toBeUndefined();
    await page.locator('[data-testid=confirm-cancel]').click();
    expect(await harness.stack.ledger.getRun('day1-fork-5')).toBeUndefined();

    // Confirmed: the fork starts, and the page shows it with its parent.
    await turn.locator('[data-testid=fork-here]').click();
    await page.locator('[data-testid=confirm-ok]').click();
    await page.locator('[data-testid=notice]', { hasText: 'Fork day1-fork-5 started from turn 5 of day1' }).waitFor();
    await page.locator('[data-testid=forked-from]', { hasText: 'Forked from day1 at turn 5 (effects reuse)' }).waitFor();
    await page.locator('[data-testid=run-status]', { hasText: 'succeeded' }).waitFor();
    const fork = await waitFor(async () => (await harness.stack.ledger.getRun('day1-fork-5'))?.status === 'succeeded' && (await harness.stack.ledger.getRun('day1-fork-5')));
    expect(fork.forkedFrom).toEqual({ runId: 'day1', turn: 5, effects: 'reuse' });
    // A finished run has a fork button on its turns; the fork's own page too.
    expect(await page.locator('[data-testid=fork-here]').count()).toBeGreaterThan(0);

    // The parent's page lists the fork, linked.
    await page.locator('[data-testid=forked-from] a').click();
    await page.locator('[data-testid=forks] a', { hasText: 'day1-fork-5' }).waitFor();
    expect(harness.stack.world.payments.refunds().length).toBe(paid);
    for (const runId of ['day1', 'day1-fork-5']) expect((await verifyRun(harness.stack.ledger, runId)).problems).toEqual([]);
  }, 180_000);

  it('refuses the report of a fork past the run\'s end, naming the field', async () => {
    const response = await fetch(`${server.origin}/api/runs/day1/fork-report?at=999`, { headers: { 'x-savepoint-token': server.token } });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toMatch(/fork\.at: run day1 has \d+ turns; fork at 1 to \d+/);
  });
});
