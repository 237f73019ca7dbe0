import type { FleetTemplates } from '../../bench/deploy.js';
import { madeOnceARun } from './made-once.js';

/**
 * bench/deploy.ts `synthesizeFleet`'s templates, made once a run for the files that read the same
 * app (madeOnceARun): test/infra/fleet.test.ts and test/local/fleet-run.test.ts both read the app
 * of 20 agents in nested stacks of 4, about 3 s of CPU a synthesis; test/engine/shared-recovery.test.ts
 * and test/local/stack-api.test.ts the app of 2 agents in one stack.
 */
export function fleetOnce(agents: number, nested: boolean | number): Promise<FleetTemplates> {
  return madeOnceARun(`fleet-${agents}-nested-${nested}`, async () => (await import('../../bench/deploy.js')).synthesizeFleet(agents, nested));
}
