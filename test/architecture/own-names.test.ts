import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sourceFiles } from './import-graph.js';

/**
 * The CLI's bundle (bin/bundle.js, cliBundle) is built without esbuild's keepNames: a function or
 * class the bundle renames to resolve a clash (`Foo` -> `Foo2`), or one esbuild binds to a class
 * expression (`var Foo = class _Foo`), then reports that name as its own. So the code it bundles
 * reads no function's or class's own name: no `constructor.name`, no `new.target.name`, no
 * `SomeClass.name` of a class declared here. Errors name themselves (`this.name = …`).
 */
const ROOT = new URL('../..', import.meta.url).pathname;
const BUNDLED = ['lambdas', 'local', 'cli', 'client', 'sim', 'mcp', 'infra', 'cdk', 'testing'];

/** Reads of an object's class name whose class is not bundled (a package's), each with why it is safe. */
const PACKAGE_CLASSES: Record<string, string> = {
  'local/aws/iam/services.ts': 'an AWS SDK command (the SDK is left to Node, not bundled)',
};

/** Where `text` reads the own name of a class: an instance's, or one of the classes in `declared`. */
export function ownNameReads(text: string, declared: ReadonlySet<string>): string[] {
  const reads = [...text.matchAll(/\b(?:constructor|new\.target)\.name\b/g)].map((match) => match[0]);
  for (const match of text.matchAll(/\b([A-Za-z_$][\w$]*)\.name\b/g)) if (declared.has(match[1]!)) reads.push(match[0]);
  return reads;
}

const files = sourceFiles(ROOT, BUNDLED);
const texts = new Map(files.map((file) => [file, readFileSync(join(ROOT, file), 'utf8')]));
// Classes (a function's name shares its spelling with variables too often to be told apart here).
const declared = new Set([...texts.values()].flatMap((text) => [...text.matchAll(/\bclass\s+([A-Za-z_$][\w$]*)/g)].map((match) => match[1]!)));

describe("the bundled code (the CLI's bundle has no keepNames)", () => {
  it('is read from the sources (the scan is not vacuous)', () => {
    expect(files.length).toBeGreaterThan(150);
    expect(declared).toContain('EmbeddedLedger');
    expect(ownNameReads('throw new Error(`${this.constructor.name} failed`)', declared)).toEqual(['constructor.name']);
    expect(ownNameReads('log(EmbeddedLedger.name, tool.name, new.target.name)', declared)).toEqual(['new.target.name', 'EmbeddedLedger.name']);
  });

  it("reads no function's or class's own name", () => {
    const reads = files.filter((file) => !(file in PACKAGE_CLASSES)).flatMap((file) => ownNameReads(texts.get(file)!, declared).map((read) => `${file}: ${read}`));
    expect(reads).toEqual([]);
  });
});
