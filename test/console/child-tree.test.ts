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
 * The console shows a run's tree of child runs (defineAgentTool) and kills it: a root whose child's
 * child waits for a person, killed from the root's page; the page lists its child, and that child's
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

it.skipIf(!haveChromium)("lists the root's child runs as a tree, each with its own status, and kills the tree from the page", async () => {
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

  // Killed from the page: the console's kill records the tree's kills and stops the children's
  // executions (the leaf waits for a person: without the stop it would wait on until its deadline).
  await page.locator('[data-testid=kill-run]').click();
  await page.locator('#confirm-reason').fill('wrong invoice');
  await page.locator('[data-testid=confirm-ok]').click();
  await waitFor(async () => (await Promise.all(['console-tree', midId, leafId].map((runId) => stack.ledger.getRun(runId)))).every((run) => run?.status === 'killed'));
  await page.reload();
  const leaf = page.locator(`[data-testid=child-runs] > li[data-child="${midId}"][data-status=killed] > ul > li[data-child="${leafId}"][data-status=killed]`);
  await leaf.waitFor();
  expect(await leaf.textContent()).toContain(`child run ${leafId} · tree-leaf by ask_leaf (1/1) · killed`);
  const asked = (await stack.ledger.getRun('console-tree'))!.killed!.by;
  expect((await stack.ledger.getRun(leafId))!.killed).toMatchObject({ by: `parent run ${midId}`, reason: `its parent run ${midId} was killed: its parent run console-tree was killed by ${asked}: wrong invoice` });
  expect((await stack.ledger.getRun(leafId))!.stopReason).toMatch(/^killed by parent run /);
}, 120_000);
