/**
 * The batch state machine as CDK synthesizes it (infra/batch-state-machine.ts), for the twin to
 * run: its template (the definition, and its role's policies, which the twin's IAM decides its S3
 * reads by). An installed package reads the template bin/build.js synthesized into dist/template/
 * (its CDK is an optional peer, absent from an application that only runs agents); a checkout
 * synthesizes it (local/template/batch-synth.ts), once per change of its sources (cachedBatchTemplate).
 */
import { existsSync, readFileSync } from 'node:fs';
import { extractDefinition, type AslDefinition, type CfnTemplateJson } from './asl.js';
import { cachedBatchTemplate } from './cache.js';

/** Where bin/build.js ships the template, beside the agent's templates. */
export const SHIPPED_BATCH_TEMPLATE = 'batch.template.json';
const shipped = new URL(`../../template/${SHIPPED_BATCH_TEMPLATE}`, import.meta.url);

let rendered: CfnTemplateJson | undefined;

/** The batch state machine's template (once per process: it does not depend on the agent). */
export async function batchTemplate(): Promise<CfnTemplateJson> {
  rendered ??= existsSync(shipped) ? (JSON.parse(readFileSync(shipped, 'utf8')) as CfnTemplateJson) : ((await cachedBatchTemplate()) as CfnTemplateJson);
  return structuredClone(rendered);
}

/** The batch definition. */
export async function batchAsl(): Promise<AslDefinition> {
  return extractDefinition(await batchTemplate());
}
