/**
 * `node --import tsx bench/profile-row.ts [memory|disk|dynalite] [steps] [runs] [out.cpuprofile|-]`: a CPU
 * profile of one overhead row's measured runs only (bench/overhead.ts's stack, scripted model and
 * run-scoped effects, the twin's IAM on unless NO_IAM is set), after the same warm-up: what
 * `node --cpu-prof` on the whole benchmark mixes with startup, the floor's runs and the warm-up.
 * Open the profile in Chrome's DevTools (Performance), or sum its self time by file. Prints the
 * CPU per agent step of the profiled runs (with `-` for the file: not profiled, the figure alone).
 */
import { Session } from 'node:inspector/promises';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedTemplate } from '../local/template/cache.js';
import type { CfnTemplateJson } from '../local/template/asl.js';
import { countingLedger } from '../lambdas/ledger/counting-ledger.js';
import { benchStack, runOnce } from './pipeline.js';
import { scriptedModel } from './scripted-model.js';
import { dayWithSteps } from './workload.js';
import { runScopedEffects } from './overhead.js';

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
  for (let run = 2; run <= 5; run++) await runOnce(stack, `warm-up-${run}`, day);
  const session = new Session();
  session.connect();
  if (out !== '-') {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 200 });
    await session.post('Profiler.start');
  }
  let cpuMs = 0;
  for (let run = 1; run <= runs; run++) cpuMs += (await runOnce(stack, `run-${run}`, day)).cpuMs;
  if (out !== '-') writeFileSync(out, JSON.stringify((await session.post('Profiler.stop')).profile));
  console.log(`${target}: ${(cpuMs / runs / steps).toFixed(3)} ms of CPU per agent step over ${runs} runs of ${steps} steps${out === '-' ? '' : `; profile in ${out}`}`);
} finally {
  await stack.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
}
