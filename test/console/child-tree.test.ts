import { existsSync } from 'node:fs';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { childRunId } from '../../lambdas/define.js';
import { startLocalConsole } from '../../console/local.js';
import type { ConsoleServer } from '../../console/server.js';
import type { LocalStack } from '../../local/runtime/local-stack.js';
import { waitFor } from '../support/agent-harness.js';
import { root, treeStack } from '../support/tree-agents.js';

/**
 * The console shows a run's tree of child runs (defineAgentTool): a root whose child's child waits
 * for a person, killed through the runs API; the root's page lists its child, and that child's
 * own child below it, each with its status, in a real browser (headless Chromium).
 */
const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const haveChromium = existsSync(CHROMIUM);

let stack: LocalStack;
let server: ConsoleServer;
let browser: Browser;
const unwatch: (() => void)[] = [];
beforeAll(async () => {
  if (!haveChromium) return;
  const { chromium } = await import('playwright-core');
  [stack, browser] = await Promise.all([treeStack(root, unwatch), chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] })]);
  server = await startLocalConsole(stack);
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await stack?.close();
  unwatch.forEach((off) => off());
});

it.skipIf(!haveChromium)("lists the root's child runs as a tree, each with its own status", async () => {
  const midId = childRunId('console-tree', 1, 'call_1');
  const leafId = childRunId(midId, 1, 'call_1');
  stack.engine.startExecution({ name: 'console-tree-1', input: { runId: 'console-tree', input: { invoice: 'inv_1' } } });
  await waitFor(async () => (await stack.ledger.listPendingApprovals()).some((approval) => approval.runId === leafId));
  const page = await browser.newPage();
  // The page keeps the session token the console's address carries, then opens the run.
  await page.goto(server.url);
  await page.waitForURL(`${server.origin}/#/`);
  await page.goto(`${server.origin}/#/run/console-tree`);
  await page.locator(`[data-testid=child-runs] > li[data-child="${midId}"][data-status=running] li[data-child="${leafId}"][data-status=running]`).waitFor();

  const cancelled = await fetch(`${stack.endpoints.runs}/console-tree/cancel`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'wrong invoice' }) });
  expect(cancelled.status).toBe(202);
  await waitFor(async () => (await Promise.all(['console-tree', midId, leafId].map((runId) => stack.ledger.getRun(runId)))).every((run) => run?.status === 'killed'));
  await page.reload();
  const leaf = page.locator(`[data-testid=child-runs] > li[data-child="${midId}"][data-status=killed] > ul > li[data-child="${leafId}"][data-status=killed]`);
  await leaf.waitFor();
  expect(await leaf.textContent()).toContain(`child run ${leafId} · tree-leaf by ask_leaf (1/1) · killed`);
}, 120_000);
