#!/usr/bin/env node
// `npm run api`: the public surface of each entry point (package.json `exports`), as
// @microsoft/api-extractor reports it from the declarations the build emits, against the report
// checked in under api/ (`<entry>.api.md`). Any difference fails (exit 1): a change to the public
// API is visible in review before it ships. `npm run api -- --update` writes the reports anew
// (commit them with the change). An export without TSDoc is an error (ae-undocumented), in both modes.
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { tsc } from './tsc.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const update = process.argv.includes('--update');
const declarations = join(root, '.api', 'dts');

// The published build's declarations, alone (bin/build.js emits the same into dist/ with the JavaScript).
rmSync(join(root, '.api'), { recursive: true, force: true });
tsc(['-p', join(root, 'tsconfig.build.json'), '--emitDeclarationOnly', '--declarationMap', 'false', '--outDir', declarations], root);

const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
/** Each entry point (`savepoint`, `savepoint/client`, …), its declarations, and its report's name. */
const entryPoints = Object.entries(pkg.exports)
  .filter(([, target]) => typeof target === 'object' && target.types)
  .map(([subpath, target]) => ({
    name: subpath === '.' ? pkg.name : `${pkg.name}/${subpath.slice(2)}`,
    types: join(declarations, target.types.replace(/^\.\/dist\//, '')),
    report: subpath === '.' ? pkg.name : `${pkg.name}-${subpath.slice(2)}`,
  }));

export const MESSAGES = {
  compilerMessageReporting: { default: { logLevel: 'warning' } },
  extractorMessageReporting: {
    default: { logLevel: 'warning' },
    // Every export is documented where users meet it: an undocumented one fails the check.
    'ae-undocumented': { logLevel: 'error', addToApiReportFile: false },
    // savepoint does not mark exports @public / @beta: one release line.
    'ae-missing-release-tag': { logLevel: 'none' },
    // A type the surface names but the entry point does not export shows in the report as such.
    'ae-forgotten-export': { logLevel: 'none', addToApiReportFile: true },
  },
  // TSDoc's own syntax (a `{` or `>` not escaped): the comments are written for editors, in Markdown.
  tsdocMessageReporting: { default: { logLevel: 'none' } },
};

mkdirSync(join(root, 'api'), { recursive: true });
let failed = 0;
for (const entry of entryPoints) {
  const config = ExtractorConfig.prepare({
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: entry.types,
      compiler: {
        overrideTsconfig: {
          compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: true, types: ['node'], lib: ['ES2023', 'DOM'] },
          files: [entry.types],
        },
      },
      apiReport: { enabled: true, reportFileName: entry.report, reportFolder: join(root, 'api'), reportTempFolder: join(root, '.api', 'temp') },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: MESSAGES,
    },
    configObjectFullPath: join(root, 'api', 'api-extractor.json'),
    packageJsonFullPath: join(root, 'package.json'),
  });
  const problems = [];
  const result = Extractor.invoke(config, {
    localBuild: update,
    messageCallback: (message) => {
      // Printed here, once, with the entry point's name; api-extractor's own lines say less.
      message.handled = true;
      if (message.logLevel === 'error' || message.logLevel === 'warning') problems.push(`${message.logLevel}: ${message.text}${message.sourceFilePath ? ` (${message.sourceFilePath.replace(declarations, '').replace(/\.d\.ts$/, '.ts')}:${message.sourceFileLine})` : ''}`);
    },
  });
  for (const problem of problems) process.stderr.write(`${entry.name}: ${problem}\n`);
  if (result.apiReportChanged && !update) process.stderr.write(`${entry.name}: the public API differs from api/${entry.report}.api.md: review the difference (npm run api -- --update writes it), then commit it\n`);
  if (!result.succeeded || result.errorCount > 0) failed += 1;
  process.stdout.write(`${entry.name}: ${result.succeeded && result.errorCount === 0 ? 'ok' : 'FAILED'} (${result.errorCount} errors, ${result.warningCount} warnings)\n`);
}
// .api/ stays (git ignores it): .api/temp/ holds the reports as they are now, for a diff.
process.exit(failed === 0 ? 0 : 1);
