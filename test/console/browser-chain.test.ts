import { screenshotPath } from '../support/screenshots.js';
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startLocalConsole } from '../../console/local.js';
import type { ConsoleServer } from '../../console/server.js';
import { waitForChain } from '../../local/runtime/chain.js';
import { startLocalStack, type LocalStack } from '../../local/runtime/local-stack.js';
import { counterAgent } from '../support/counter-agent.js';

/**
 * The continue-as-new chain in the console, in a real browser (headless Chromium through
 * playwright-core): a long run (scaled down: 40 tool calls, a history threshold of 100 events, as
 * in test/longruns) hands itself to successor executions. The test holds the run at one tool call
 * (the tool waits on a promise the test resolves), so the page is looked at mid-chain without a
 * race: the run is `running` in the list whatever its handed-off executions ended as, the run page
 * lists every execution in order with how it got the run and why, and the graph counts over the
 * chain or over one execution.
 */
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);
const CALLS = 40;
const HOLD_AT = 36;
const RUN = 'chain-1';

let stack: LocalStack;
let server: ConsoleServer;
let browser: Browser;
let page: Page;
let release!: () => void;
const held = new Promise<void>((resolve) => (release = resolve));
let reached!: () => void;
const atHold = new Promise<void>((resolve) => (reached = resolve));

describe.skipIf(!haveChromium)('the execution chain in the console', () => {
  beforeAll(async () => {
    const { chromium } = await import('playwright-core');
    const agent = counterAgent({
      calls: CALLS,
      perTurn: 4,
      beforeTick: (n) => {
        if (n !== HOLD_AT) return;
        reached();
        return held;
      },
    });
    [stack, browser] = await Promise.all([startLocalStack({ agent, retryDelayMs: 1 }), chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })]);
    server = await startLocalConsole(stack);
    page = await browser.newPage({ viewport: { width: 1280, height: 1000 } });
    page.setDefaultTimeout(120_000);
  }, 120_000);
  afterAll(async () => {
    release?.();
    await browser?.close();
    await server?.close();
    await stack?.close();
  });

  it('shows a handed-off run as running, lists every execution of its chain with its reason, and counts the graph over the chain or one execution', async () => {
    const { executionArn } = stack.engine.startExecution({ name: RUN, input: { runId: RUN, input: { id: RUN }, config: { historyEventsBeforeHandoff: 100 } } });
    await atHold;
    const run = (await stack.ledger.getRun(RUN))!;
    const n = run.executions.length;
    expect(n).toBeGreaterThanOrEqual(2);
    // The executions it handed off from ended SUCCEEDED; the run goes on.
    expect(stack.engine.describeExecution(run.executions[0]!).status).toBe('SUCCEEDED');

    // The list: the run is running (the ledger's status, whichever execution drives it), with its executions so far.
    await page.goto(server.url);
    const row = page.locator(`tr[data-run="${RUN}"]`);
    await row.locator('[data-testid=run-status]', { hasText: 'running' }).waitFor();
    await expect(row.locator('[data-testid=run-executions]').textContent()).resolves.toBe(String(n));

    // The run: every execution in order, how it got the run and why; the last one drives it.
    await row.locator('a').click();
    const executions = page.locator('[data-testid=executions] > li');
    await executions.nth(n - 1).waitFor();
    expect(await executions.count()).toBe(n);
    expect(await executions.evaluateAll((items) => items.map((item) => [item.getAttribute('data-execution'), item.getAttribute('data-via'), item.getAttribute('data-role')]))).toEqual(
      run.executions.map((arn, i) => [arn.split(':').pop(), i === 0 ? 'start' : 'handoff', i === n - 1 ? 'driving' : 'handed off']),
    );
    await expect(executions.nth(1).textContent()).resolves.toContain(`continue-as-new: ${RUN} reached the history threshold (100 events)`);
    await expect(executions.nth(0).textContent()).resolves.toContain('execution SUCCEEDED');
    expect(await page.locator('[data-testid=timeline] > li.execution[data-via=handoff]').count()).toBe(n - 1);

    // The graph: counts summed over the chain, the current state in the driving execution; then one execution's.
    const handoff = page.locator('[data-testid=state-machine] [data-state=Handoff] text.counts');
    await expect(handoff.textContent()).resolves.toContain(`entered ${n - 1} `);
    await page.locator('[data-testid=state-machine] [data-state=CallTool] rect.current').waitFor();
    await page.screenshot({ path: screenshotPath('console-chain.png'), fullPage: false });
    await page.locator('[data-testid=graph-execution]').selectOption(run.executions[0]!.split(':').pop()!);
    await page.locator('[data-testid=state-machine] [data-state=Handoff] text.counts', { hasText: 'entered 1 ' }).waitFor();
    await page.locator('[data-testid=graph-execution]').selectOption('');
    await page.locator('[data-testid=state-machine] [data-state=Handoff] text.counts', { hasText: `entered ${n - 1} ` }).waitFor();

    // Let the run finish: the page follows it to its last execution and shows it succeeded.
    release();
    await waitForChain(stack.engine, stack.ledger, RUN, executionArn);
    const done = (await stack.ledger.getRun(RUN))!;
    expect(done).toMatchObject({ status: 'succeeded', toolCalls: CALLS });
    await page.locator('[data-testid=run-status]', { hasText: 'succeeded' }).waitFor();
    await executions.nth(done.executions.length - 1).waitFor();
    await expect(executions.last().getAttribute('data-role')).resolves.toBe('succeeded');
    expect(await executions.count()).toBe(done.executions.length);
    await page.goto(`${server.origin}/#/`);
    await row.locator('[data-testid=run-status]', { hasText: 'succeeded' }).waitFor();
    await expect(row.locator('[data-testid=run-executions]').textContent()).resolves.toBe(String(done.executions.length));
  }, 180_000);
});
