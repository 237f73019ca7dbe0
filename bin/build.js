#!/usr/bin/env node
// The published build (`npm run build`, and `npm pack` through `prepack`): `tsc` compiles the
// sources to dist/ (ESM, .d.ts, source maps with the sources inlined), in the sources' layout;
// the files the compiled code reads beside itself (the console's page) are copied next to it.
// Plain tsc, not a bundler: one output file per source file keeps every entry point's imports
// shared (one module instance for the agent and the harness), and `.d.ts` come from the compiler
// that checks the sources.
import { cpSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { tsc } from './tsc.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');

rmSync(dist, { recursive: true, force: true });
// One checker (TypeScript 7 runs 4 by default, each building the types its share of the files
// reaches, most of them common to all): the same output in about two thirds of the CPU; the tests
// pack the package (prepack) on 2 cores they keep busy. On the command line, not in
// tsconfig.build.json, which TypeDoc (TypeScript 6: no such option) reads too.
tsc(['-p', join(root, 'tsconfig.build.json'), '--checkers', '1'], root);
cpSync(join(root, 'console/static'), join(dist, 'console/static'), { recursive: true });

// The stack's template, synthesized now for a placeholder agent name: an installed package runs
// it locally without the CDK (local/template/synthesize.ts), renamed for each agent — untraced, and traced
// (what a local run with OTEL_* variables runs).
const { synthesizeTemplate, TEMPLATE_AGENT, SHIPPED_TEMPLATES } = await import(pathToFileURL(join(dist, 'local/template/synthesize.js')).href);
mkdirSync(join(dist, 'template'), { recursive: true });
for (const [variant, file] of Object.entries(SHIPPED_TEMPLATES)) {
  writeFileSync(join(dist, 'template', file), JSON.stringify(await synthesizeTemplate(TEMPLATE_AGENT, { traced: variant === 'traced' })));
}
// The batch state machine's template (its definition and its role's policies), which `serve` runs for `POST /v1/batches` (local/template/batch.ts).
const { SHIPPED_BATCH_TEMPLATE } = await import(pathToFileURL(join(dist, 'local/template/batch.js')).href);
const { synthesizeBatchTemplate } = await import(pathToFileURL(join(dist, 'local/template/batch-synth.js')).href);
writeFileSync(join(dist, 'template', SHIPPED_BATCH_TEMPLATE), JSON.stringify(synthesizeBatchTemplate()));
