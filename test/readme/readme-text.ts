import { readdirSync, readFileSync } from 'node:fs';
import { fencedBlocks } from './markdown.js';

/**
 * The snippets of the README and of the guides in docs/, for the tests that run them (from a
 * package outside the repository: own-agent.test.ts; and the repository's own: the CLI bundle, the
 * deploy commands, the runbook, the fork request): each is taken from the text itself, so the doc
 * and the test cannot drift; a snippet that is not where its pattern looks for it fails the test,
 * naming it. The guides are every docs/*.md, found when the tests load: a guide added later is
 * searched too, with no list to update.
 */
const ROOT = new URL('../../', import.meta.url);

/** README.md, then every guide of docs/ in name order: each file's path (from the repository's root) and text. */
export const DOC_FILES: ReadonlyMap<string, string> = new Map(
  ['README.md', ...readdirSync(new URL('docs/', ROOT)).filter((name) => name.endsWith('.md')).sort().map((name) => `docs/${name}`)].map((path) => [path, readFileSync(new URL(path, ROOT), 'utf8')]),
);

/** The README and the guides, one after another: for a test that looks at every snippet of a kind (each deploy command). */
export const README = [...DOC_FILES.values()].join('\n\n');

/** Each block the README and the guides mark `<!-- <kind>: <name> -->` (readme-file, snippet), by name: its text and where it is (a name shown twice fails). */
function markedBlocks(kind: 'readme-file' | 'snippet'): Map<string, { body: string; at: string }> {
  const found = new Map<string, { body: string; at: string }>();
  for (const [path, text] of DOC_FILES) {
    for (const block of fencedBlocks(text)) {
      const name = new RegExp(`^${kind}: (\\S+)$`).exec(block.mark ?? '')?.[1];
      if (name === undefined) continue;
      if (found.has(name)) throw new Error(`<!-- ${kind}: ${name} --> is shown twice (${found.get(name)!.at}, ${path}:${block.line})`);
      found.set(name, { body: block.body, at: `${path}:${block.line}` });
    }
  }
  return found;
}

/** The files the README and the guides show under `<!-- readme-file: name -->`, by name (a name shown twice fails). */
export function readmeFiles(): Record<string, string> {
  const files = Object.fromEntries([...markedBlocks('readme-file')].map(([name, { body }]) => [name, body]));
  for (const name of ['my-agent.ts', 'my-agent.dev.ts', 'my-agent.test.ts', 'my-agent.node-test.ts', 'app.ts']) if (!files[name]) throw new Error(`neither README.md nor docs/*.md has a <!-- readme-file: ${name} --> block`);
  return files;
}

/**
 * The block the README or a guide marks `<!-- snippet: id -->` (the line before its fence): its
 * text, the fence's indentation taken off. A test that runs a block takes it by its id, and
 * test/readme/snippets.ts names that test as the one that runs it.
 */
export function snippet(id: string): string {
  const found = markedBlocks('snippet').get(id);
  if (!found) throw new Error(`neither README.md nor docs/*.md has a <!-- snippet: ${id} --> block`);
  return found.body;
}

/** The first match of `pattern`'s first group in the README, else in the first guide of docs/ that has one; or a failure naming what is missing. */
export function readmeInline(pattern: RegExp, what: string): string {
  for (const text of DOC_FILES.values()) {
    const found = new RegExp(pattern.source, pattern.flags.replace('g', '')).exec(text)?.[1];
    if (found !== undefined) return found;
  }
  throw new Error(`neither README.md nor docs/*.md has ${what} (${pattern})`);
}

/** A command line as the shell splits it: words, 'single-quoted' words whole, a trailing # comment dropped. */
export function shellWords(line: string): string[] {
  return [...line.replace(/\s+#.*$/, '').matchAll(/'([^']*)'|(\S+)/g)].map((match) => match[1] ?? match[2]!);
}

/** A pattern for a line of output the README shows: its words as they are, any figure (a number, a 16-digit hex digest) any other. */
export function shapeOf(line: string): string {
  return line
    .split(/([0-9a-f]{16}|\d+)/)
    .map((part, index) => (index % 2 === 0 ? part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&') : /^\d+$/.test(part) ? '\\d+' : '[0-9a-f]{16}'))
    .join('');
}

/** The packages an install block (the README's: `snippet('install')`) installs with `npm install` and with `npm install -D`, by name. */
export function installedBy(block: string): { dependencies: string[]; devDependencies: string[] } {
  const lines = block.split('\n').map(shellWords);
  const named = (dev: boolean) => lines.filter((words) => words[0] === 'npm' && words[1] === 'install' && words.includes('-D') === dev).flatMap((words) => words.slice(2).filter((word) => word !== '-D'));
  return { dependencies: named(false), devDependencies: named(true) };
}

