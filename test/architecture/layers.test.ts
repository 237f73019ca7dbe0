import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { folderCircles, folderGraph, folderOf, importCircles, importGraph, importSpecifiers, layerOf, layerViolations, sourceFiles, type Layer } from './import-graph.js';
import { LAYERS } from './layers.js';

/**
 * The tree is the architecture: no two source modules import each other (directly or round a
 * circle), no two folders do either, and lambdas/ is a ladder of rungs, one folder each, that
 * imports only downwards and never outside itself (local/, cli/, sim/, agents/ and the rest build
 * on lambdas/, not the other way round). README's Layout lists the rungs from LAYERS
 * (test/readme/layout.test.ts holds the two the same).
 */
const ROOT = new URL('../..', import.meta.url).pathname;
const SOURCES = ['lambdas', 'local', 'cli', 'client', 'console', 'infra', 'cdk', 'sim', 'testing'];


const files = sourceFiles(ROOT, SOURCES);
const graph = importGraph(ROOT, files);

describe('the import graph', () => {
  it('is read from the sources (the checks are not vacuous)', () => {
    expect(files.length).toBeGreaterThan(150);
    expect(graph.get('lambdas/steps/call-tool.ts')).toEqual(expect.arrayContaining(['lambdas/conversation/turns.ts', 'lambdas/shared/errors.ts']));
    expect(graph.get('lambdas/handlers/call-model.ts')).toEqual(['lambdas/adapters/aws-deps.ts', 'lambdas/wiring/steps/call-model.ts', 'lambdas/adapters/aws-models.ts', 'lambdas/adapters/clients-on-first-call.ts']);
  });

  it('has no import circle among source files', () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it('has no import circle among folders', () => {
    expect(folderCircles(graph)).toEqual([]);
  });

  it('gives every rung of lambdas/ one folder (or one top-level file, its parts in a folder of its name beside it)', () => {
    const entryWithParts = (paths: readonly string[]) => paths.length === 2 && paths[0]!.endsWith('.ts') && paths[1] === `${paths[0]!.slice(0, -'.ts'.length)}/`;
    expect(LAYERS.filter((layer) => layer.paths.length !== 1 && !entryWithParts(layer.paths)).map((layer) => layer.name)).toEqual([]);
  });

  it('has no file of lambdas/ or local/ over 600 lines (a big file is split by the nouns it holds)', () => {
    const long = files.filter((file) => /^(lambdas|local)\//.test(file)).map((file) => ({ file, lines: readSource(file).split('\n').length - 1 })).filter(({ lines }) => lines > 600);
    expect(long).toEqual([]);
  });

  it('puts every file of lambdas/ in a layer', () => {
    expect(files.filter((file) => file.startsWith('lambdas/') && layerOf(LAYERS, file) === undefined)).toEqual([]);
  });

  it('has lambdas/ import only downwards and nothing outside lambdas/', () => {
    expect(layerViolations(graph, LAYERS)).toEqual([]);
  });

  it('has the steps and the logic beneath them reach AWS only through ports (no @aws-sdk import)', () => {
    const portable = ['lambdas/steps/', 'lambdas/wiring/', 'lambdas/conversation/', 'lambdas/runs/', 'lambdas/approvals/', 'lambdas/guards/', 'lambdas/define.ts', 'lambdas/define/'];
    const offenders = files
      .filter((file) => portable.some((path) => file.startsWith(path)))
      .flatMap((file) => importSpecifiers(readSource(file)).filter((specifier) => specifier.startsWith('@aws-sdk/')).map((specifier) => `${file}: ${specifier}`));
    expect(offenders).toEqual([]);
  });

  it('has infra/ import no handler or adapter (it bundles handlers by path; it does not run them)', () => {
    const offenders = files.filter((file) => file.startsWith('infra/')).flatMap((file) => (graph.get(file) ?? []).filter((target) => /^lambdas\/(handlers|adapters)\//.test(target)).map((target) => `${file} imports ${target}`));
    expect(offenders).toEqual([]);
  });

  it('has lambdas/ import the package by none of its own names (no way round the layers)', () => {
    const offenders = files
      .filter((file) => file.startsWith('lambdas/'))
      .flatMap((file) => importSpecifiers(readSource(file)).filter((specifier) => /^savepoint(\/|$)/.test(specifier)).map((specifier) => `${file}: ${specifier}`));
    expect(offenders).toEqual([]);
  });
});

describe('the shipped sources', () => {
  it("read no package under savepoint's own node_modules/ (installed, its dependencies and peers are beside it, not in it)", () => {
    const reading = /['"`][^'"`\n]*\bnode_modules\/[^'"`\n]*['"`]/;
    const found = files.flatMap((file) =>
      readFileSync(join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, index) => (!/^\s*(\/\/|\*)/.test(line) && reading.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });
});

describe('importSpecifiers', () => {
  it('reads static, type-only, re-export, side-effect and dynamic imports, over several lines', () => {
    const text = [
      "import { z } from 'zod';",
      'import {',
      '  a,',
      '  type B,',
      "} from './a.js';",
      "import type { C } from '../c.js';",
      "export { d } from './d.js';",
      "export * from './e.js';",
      "import './polyfill.js';",
      "const f = await import('./f.js');",
    ].join('\n');
    expect(importSpecifiers(text)).toEqual(['zod', './a.js', '../c.js', './d.js', './e.js', './polyfill.js', './f.js']);
  });

  it('does not read imports in comments', () => {
    expect(importSpecifiers("// import { x } from './x.js';\n/* import './y.js'; */\nexport const z = 1;")).toEqual([]);
  });
});

describe('importCircles', () => {
  it('reports a circle of three files once, and not the file that only joins it', () => {
    const circular = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(importCircles(circular)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
  });

  it('reports two files importing each other and a file importing itself', () => {
    expect(importCircles(new Map([['a.ts', ['b.ts']], ['b.ts', ['a.ts']], ['c.ts', ['c.ts']]]))).toEqual([['a.ts', 'b.ts'], ['c.ts']]);
  });

  it('reports nothing for a graph without circles (a diamond)', () => {
    expect(importCircles(new Map([['a.ts', ['b.ts', 'c.ts']], ['b.ts', ['d.ts']], ['c.ts', ['d.ts']], ['d.ts', []]]))).toEqual([]);
  });

  it('follows a chain deeper than the call stack', () => {
    const chain = new Map(Array.from({ length: 20_000 }, (_, i) => [`f${i}.ts`, [`f${(i + 1) % 20_000}.ts`]] as [string, string[]]));
    expect(importCircles(chain)[0]).toHaveLength(20_000);
  });
});

describe('folderCircles', () => {
  it('names the folders of a circle and the file imports that close it', () => {
    const graph = new Map([
      ['lambdas/ledger/ledger.ts', ['lambdas/guards/breaker.ts', 'lambdas/shared/errors.ts']],
      ['lambdas/guards/breaker.ts', ['lambdas/ledger/records.ts']],
      ['lambdas/ledger/records.ts', []],
      ['lambdas/shared/errors.ts', []],
    ]);
    expect(folderCircles(graph)).toEqual([
      {
        folders: ['lambdas/guards/', 'lambdas/ledger/'],
        imports: [
          'lambdas/guards/ → lambdas/ledger/: lambdas/guards/breaker.ts imports lambdas/ledger/records.ts',
          'lambdas/ledger/ → lambdas/guards/: lambdas/ledger/ledger.ts imports lambdas/guards/breaker.ts',
        ],
      },
    ]);
  });

  it('sees no circle in imports within one folder, and keeps a top-level file a node of its own', () => {
    const graph = new Map([
      ['lambdas/define.ts', ['lambdas/models/spec.ts']],
      ['lambdas/index.ts', ['lambdas/tools/effects.ts']],
      ['lambdas/tools/effects.ts', ['lambdas/define.ts', 'lambdas/tools/attempt.ts']],
      ['lambdas/tools/attempt.ts', ['lambdas/tools/effects.ts']],
      ['lambdas/models/spec.ts', []],
    ]);
    expect(folderOf('lambdas/define.ts')).toBe('lambdas/define.ts');
    expect(folderGraph(graph).get('lambdas/tools/')).toEqual(['lambdas/define.ts']);
    expect(folderCircles(graph)).toEqual([]);
  });
});

describe('layerViolations', () => {
  const layers: Layer[] = [
    { name: 'shared', paths: ['lambdas/shared/'] },
    { name: 'steps', paths: ['lambdas/steps/'] },
  ];

  it('reports an import of a higher layer and of a file outside the layers', () => {
    const graph = new Map([
      ['lambdas/shared/clock.ts', ['lambdas/steps/finalize.ts']],
      ['lambdas/steps/finalize.ts', ['lambdas/shared/clock.ts', 'local/engine.ts']],
    ]);
    expect(layerViolations(graph, layers)).toEqual([
      'lambdas/shared/clock.ts (shared) imports lambdas/steps/finalize.ts (steps), a higher layer',
      'lambdas/steps/finalize.ts (steps) imports local/engine.ts, which is outside the layers',
    ]);
  });

  it('allows imports downwards and within a layer, and does not judge files outside the layers', () => {
    const graph = new Map([
      ['lambdas/steps/a.ts', ['lambdas/steps/b.ts', 'lambdas/shared/c.ts']],
      ['local/engine.ts', ['lambdas/steps/a.ts']],
    ]);
    expect(layerViolations(graph, layers)).toEqual([]);
  });
});

function readSource(file: string): string {
  return readFileSync(join(ROOT, file), 'utf8');
}
