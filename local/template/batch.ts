/**
 * The batch state machine's definition as CDK synthesizes it (infra/batch-state-machine.ts), for
 * the twin to run: the ASL a deployment's BatchStateMachine carries. An installed package reads the
 * definition bin/build.js synthesized into dist/template/ (its CDK is an optional peer, absent
 * from an application that only runs agents); a checkout synthesizes it (local/template/batch-synth.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import type { AslDefinition } from './asl.js';

/** Where bin/build.js ships the definition, beside the agent's templates. */
export const SHIPPED_BATCH_ASL = 'batch.asl.json';
const shipped = new URL(`../../template/${SHIPPED_BATCH_ASL}`, import.meta.url);

let rendered: AslDefinition | undefined;

/** The batch definition (once per process: it does not depend on the agent). */
export async function batchAsl(): Promise<AslDefinition> {
  rendered ??= existsSync(shipped) ? (JSON.parse(readFileSync(shipped, 'utf8')) as AslDefinition) : (await import('./batch-synth.js')).synthesizeBatchAsl();
  return structuredClone(rendered);
}
