import { screenshotPath } from '../support/screenshots.js';
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { duplicatePayments, sampleDay, startHarness, type Harness } from '../support/refund-harness.js';
import { postDecision, waitFor } from '../support/agent-harness.js';

/**
 * The approval page in a real browser: Debian's headless Chromium, driven by playwright-core.
 * `.ci/run` installs chromium when it is missing; without it this file is skipped, saying why.
 */
const CHROMIUM = [process.env['CHROMIUM_PATH'], '/usr/bin/chromium', '/usr/bin/chromium-browser'].find((path) => path && existsSync(path));
if (!CHROMIUM) console.warn('approval page browser test SKIPPED: no chromium (apt-get install -y chromium, or set CHROMIUM_PATH)');
const SCREENSHOT = screenshotPath('approval-page.png');

let harness: Harness;
let browser: Browser;

describe.skipIf(!CHROMIUM)('the approval page in a browser', () => {
  beforeAll(async () => {
    harness = await startHarness();
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await harness?.stack.close();
  });

  it('opens the link, shows the refund, approves once; the run pays once, and the link is then refused', async () => {
    const { stack } = harness;
    const finished = harness.run({ runId: 'browser', input: { date: sampleDay.date }, config: { approvalTimeoutSeconds: 3600 } });
    const event = await waitFor(() => harness.requested[0]);
    const approval = harness.approvals[0]!;
    const page = await browser.newPage({ viewport: { width: 900, height: 1000 } });

    // Opening the link shows what the agent wants to do and why; it decides nothing.
    await page.goto(event.links[0]!.url);
    await expect.poll(() => page.textContent('h1')).toMatch(/^Approve issue_refund of 725\.00 USD in run /);
    expect(await page.textContent('#amount')).toBe('725.00 USD');
    const text = (await page.textContent('body'))!;
    expect(text).toContain('refund $725.00 of payment pay_007 for rr_007'); // the arguments in words
    expect(text).toContain('issue_refund $725.00 for rr_007'); // the rule's summary: a row, not the heading
    expect(text).toContain('get_payment'); // the evidence: the payment the agent looked up
    expect(text).toContain(approval.runId);
    expect(text).toContain(approval.decideBy);
    expect(await stack.ledger.getApproval(approval.runId, approval.turn, approval.call)).toMatchObject({ status: 'pending' });

    await page.fill('#reason', 'matches the damaged-item claim');
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    await page.click('#approve');
    await expect.poll(() => page.textContent('#result')).toMatch(/^Done: approved by /);

    // A second click on the same link changes nothing.
    await page.click('#approve');
    await expect.poll(() => page.textContent('#result')).toMatch(/^Refused \(409\): link: already used/);
    await page.goto(event.links[0]!.url);
    expect(await page.textContent('#result')).toMatch(/^409: link: already used/);

    // The other refund above the threshold, through the API, so the run can finish.
    const second = await waitFor(() => harness.approvals[1]);
    expect(await postDecision(stack, second.approvalId, { decision: 'reject', reason: 'not this one' })).toMatchObject({ status: 200 });
    expect(JSON.parse((await finished).output!)).toMatchObject({ status: 'succeeded' });

    const recorded = await stack.ledger.getApproval(approval.runId, approval.turn, approval.call);
    expect(recorded).toMatchObject({ status: 'approved', decidedVia: 'link', decidedBy: event.links[0]!.approver, reason: 'matches the damaged-item claim', usedLinks: [expect.any(String)] });
    expect(stack.world.payments.refunds().filter((refund) => refund.refundRequestId === 'rr_007')).toHaveLength(1);
    expect(duplicatePayments(stack)).toEqual([]);
  }, 180_000);
});
