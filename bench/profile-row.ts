/**
 * `node --enable-source-maps --import tsx bench/profile-row.ts [memory|disk|dynalite] [steps] [runs] [out.cpuprofile|-]`: a CPU
 * profile of one overhead row's measured runs only (bench/overhead.ts's stack, scripted model and
 * run-scoped effects, the twin's IAM on unless NO_IAM is set), after the same warm-up: what
 * `node --cpu-prof` on the whole benchmark mixes with startup, the floor's runs and the warm-up.
 * Open the profile in Chrome's DevTools (Performance), or sum its self time by file. Prints the
 * CPU per agent step of the profiled runs (with `-` for the file: not profiled, the figure alone),
 * and with a profile, where its self time went by area (`selfTimeByArea`): each package, each
 * folder of this repository (two levels: `lambdas/ledger`, `local/engine`), Node's own modules,
 * and V8's garbage collector and unattributed time, as shares of the profiled time. The row warms
 * up as bench/overhead.ts warms it (600 steps). Run with `node --enable-source-maps`, each frame
 * of this repository's TypeScript is written at the line of its function in the source (tsx
 * compiles each file onto one line: without the maps every frame of a file is at line 1).
 */
import { Session } from 'node:inspector/promises';
import { findSourceMap } from 'node:module';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedTemplate } from '../local/template/cache.js';
import type { CfnTemplateJson } from '../local/template/asl.js';
import { countingLedger } from '../lambdas/ledger/counting-ledger.js';
import { benchStack, runOnce } from './pipeline.js';
import { scriptedModel } from './scripted-model.js';
import { dayWithSteps } from './workload.js';
import { runScopedEffects, warmUpRuns } from './overhead.js';

const [target = 'memory', stepsText = '100', runsText = '20', out = 'overhead-row.cpuprofile'] = process.argv.slice(2);
const steps = Number(stepsText);
const runs = Number(runsText);
const template = (await cachedTemplate('refund-reconciler')) as CfnTemplateJson;
const { day } = dayWithSteps(steps);
const scripted = scriptedModel();
const stateDir = target === 'disk' ? mkdtempSync(join(tmpdir(), 'savepoint-profile-row-')) : undefined;
const stack = await benchStack({
  day,
  template,
  failRate: 0,
  seed: 1,
  worldInMemory: true,
  ledger: target === 'dynalite' ? 'dynalite' : 'embedded',
  ...(stateDir && { stateDir }),
  ...(process.env['NO_IAM'] && { iam: false }),
  decorateLedger: (ledger) => countingLedger(runScopedEffects(ledger)).ledger,
  wrapModel: scripted.wrap,
});
try {
  // As the row warms up: the first run is the simulated model's, its turns then replayed.
  await runOnce(stack, 'warm-up', day);
  scripted.replay((await stack.ledger.listConversation('warm-up')).turns);
  for (let run = 2; run <= warmUpRuns(steps); run++) await runOnce(stack, `warm-up-${run}`, day);
  const session = new Session();
  session.connect();
  if (out !== '-') {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
  }
  let cpuMs = 0;
  for (let run = 1; run <= runs; run++) cpuMs += (await runOnce(stack, `run-${run}`, day)).cpuMs;
  const profile = out === '-' ? undefined : (await session.post('Profiler.stop')).profile;
  if (profile) writeFileSync(out, JSON.stringify(sourceMapped(profile)));
  console.log(`${target}: ${(cpuMs / runs / steps).toFixed(3)} ms of CPU per agent step over ${runs} runs of ${steps} steps${out === '-' ? '' : `; profile in ${out}`}`);
  if (profile) for (const [area, share] of selfTimeByArea(profile).slice(0, 25)) console.log(`${(100 * share).toFixed(1).padStart(6)}%  ${area}`);
} finally {
  await stack.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
}

/**
 * The profile's self time by area, largest first, as shares of the whole: a package (`npm:zod`),
 * a folder of this repository two levels deep, `node:` for Node's own modules, and V8's entries
 * as named ((garbage collector), (program)). The profiler's own frames (node:inspector) are left out.
 */
function selfTimeByArea(profile: { nodes: { id: number; callFrame: { url: string; functionName: string } }[]; samples?: number[]; timeDeltas?: number[] }): [string, number][] {
  const root = `${new URL('..', import.meta.url).href}`;
  const areaOf = new Map(profile.nodes.map((node) => [node.id, area(node.callFrame)]));
  const time = new Map<string, number>();
  let total = 0;
  (profile.samples ?? []).forEach((id, index) => {
    const where = areaOf.get(id);
    const delta = profile.timeDeltas?.[index] ?? 0;
    if (where === undefined || where === 'node:inspector') return;
    time.set(where, (time.get(where) ?? 0) + delta);
    total += delta;
  });
  return [...time].map(([where, ms]): [string, number] => [where, ms / total]).sort((a, b) => b[1] - a[1]);

  function area({ url, functionName }: { url: string; functionName: string }): string {
    if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
    if (url === 'node:inspector') return url;
    if (url.startsWith('node:')) return 'node:';
    const packageName = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url)?.[1];
    if (packageName) return `npm:${packageName}`;
    return url.startsWith(root) ? url.slice(root.length).split('/').slice(0, 2).join('/') : url;
  }
}

/**
 * The profile with each frame of a file that has a source map (tsx's, under `--enable-source-maps`)
 * at its function's line and column in the source; the others as they are.
 */
function sourceMapped<P extends { nodes: { callFrame: { url: string; lineNumber: number; columnNumber: number } }[] }>(profile: P): P {
  for (const { callFrame } of profile.nodes) {
    if (!callFrame.url.startsWith('file:') || callFrame.url.includes('/node_modules/')) continue;
    const entry = findSourceMap(callFrame.url)?.findEntry(callFrame.lineNumber, callFrame.columnNumber) as { originalLine?: number; originalColumn?: number } | undefined;
    if (entry?.originalLine === undefined) continue;
    callFrame.lineNumber = entry.originalLine;
    callFrame.columnNumber = entry.originalColumn ?? 0;
  }
  return profile;
}
