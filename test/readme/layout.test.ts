import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LAYERS } from '../architecture/layers.js';
import { readmeInline } from './readme-text.js';

/**
 * README's Layout is the map of the tree: its lambdas/ part lists the rungs of the ladder in
 * LAYERS' order (test/architecture/layers.ts, which layers.test.ts holds the code to), one
 * numbered line each, and it names every folder of lambdas/, every handler (one per Lambda
 * function) and every top-level folder of the repository. A rung, folder or handler added without
 * its line fails here, naming it.
 */
const ROOT = new URL('../..', import.meta.url).pathname;
const LAYOUT = readmeInline(/\n## Layout\n\n```text\n([\s\S]*?)\n```/, 'Layout section');

/** The Layout's lines from `lambdas/` to the next top-level entry. */
function lambdasPart(layout: string): string {
  const lines = layout.split('\n');
  const start = lines.findIndex((line) => line.startsWith('lambdas/'));
  const end = lines.findIndex((line, index) => index > start && /^\S/.test(line));
  return lines.slice(start, end === -1 ? undefined : end).join('\n');
}

/** Each numbered rung line: its number, its path (relative to lambdas/) and the text of its line. */
function rungLines(part: string): { number: number; path: string; line: string }[] {
  return [...part.matchAll(/^ {12}\s*(\d+) (\S+)\s+(.*)$/gm)].map((match) => ({ number: Number(match[1]), path: match[2]!, line: match[3]! }));
}

const folders = (dir: string) =>
  readdirSync(join(ROOT, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort();

describe("README's Layout", () => {
  const part = lambdasPart(LAYOUT);
  const rungs = rungLines(part);

  it('lists the rungs of lambdas/ as LAYERS does, in order, numbered from the lowest', () => {
    expect(rungs.map((rung) => rung.path)).toEqual(LAYERS.map((layer) => layer.paths[0]!.replace(/^lambdas\//, '')));
    expect(rungs.map((rung) => rung.number)).toEqual(LAYERS.map((_, index) => index + 1));
  });

  it("names on a rung's line the folder that holds the parts of a one-file rung", () => {
    const parts = LAYERS.flatMap((layer, index) => layer.paths.slice(1).map((path) => ({ index, folder: path.replace(/^lambdas\//, '') })));
    expect(parts.length).toBeGreaterThan(0);
    const missing = parts.filter(({ index, folder }) => !rungs[index]?.line.includes(folder));
    expect(missing).toEqual([]);
  });

  it('names every folder of lambdas/ and every handler', () => {
    const handlers = readdirSync(join(ROOT, 'lambdas/handlers')).filter((name) => name.endsWith('.ts')).map((name) => name.slice(0, -'.ts'.length));
    expect(handlers).toEqual(expect.arrayContaining(['start-run', 'call-tool', 'prune-versions']));
    const handlersLine = part.slice(part.indexOf(' handlers/'));
    expect(handlers.filter((handler) => !new RegExp(`(^|[\\s,:(])${handler}([\\s,)]|$)`).test(handlersLine))).toEqual([]);
    expect(folders('lambdas').filter((folder) => !part.includes(` ${folder}/`))).toEqual([]);
  });

  it('gives every top-level folder of the repository a line', () => {
    const topLevel = folders('.').filter((name) => !name.startsWith('.') && !['node_modules', 'cdk.out'].includes(name));
    expect(topLevel).toEqual(expect.arrayContaining(['lambdas', 'local', 'test']));
    expect(topLevel.filter((name) => !new RegExp(`^${name}/ `, 'm').test(LAYOUT))).toEqual([]);
  });
});
