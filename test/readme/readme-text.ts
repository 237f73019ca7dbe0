import { readdirSync, readFileSync } from 'node:fs';

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

/** The files the README and the guides show under `<!-- readme-file: name -->`, by name (a name shown twice fails). */
export function readmeFiles(): Record<string, string> {
  const files: Record<string, string> = {};
  for (const [path, text] of DOC_FILES) {
    for (const match of text.matchAll(/<!-- readme-file: ([\w.-]+) -->\n```ts\n([\s\S]*?)\n```/g)) {
      if (files[match[1]!] !== undefined) throw new Error(`<!-- readme-file: ${match[1]} --> is shown twice (again in ${path})`);
      files[match[1]!] = match[2]!;
    }
  }
  for (const name of ['my-agent.ts', 'my-agent.dev.ts', 'my-agent.test.ts', 'my-agent.node-test.ts', 'app.ts']) if (!files[name]) throw new Error(`neither README.md nor docs/*.md has a <!-- readme-file: ${name} --> block`);
  return files;
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

/** The README's install block: the packages of `npm install` and of `npm install -D`, by name. */
export function readmeInstall(): { dependencies: string[]; devDependencies: string[] } {
  const block = readmeInline(/Install \(see \[The package\][^\n]*\n\n```sh\n([\s\S]*?)\n```/, 'install block');
  const lines = block.split('\n').map(shellWords);
  const named = (dev: boolean) => lines.filter((words) => words[0] === 'npm' && words[1] === 'install' && words.includes('-D') === dev).flatMap((words) => words.slice(2).filter((word) => word !== '-D'));
  return { dependencies: named(false), devDependencies: named(true) };
}

