import { readFileSync } from 'node:fs';

/**
 * The README's snippets, for the tests that run them (from a package outside the repository:
 * own-agent.test.ts; and the repository's own: the CLI bundle, the deploy commands, the runbook,
 * the fork request): each is taken from the README itself, so the doc and the test cannot drift;
 * a snippet that is not where its pattern looks for it fails the test, naming it.
 */
export const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The files the README shows under `<!-- readme-file: name -->`, by name. */
export function readmeFiles(): Record<string, string> {
  const files = Object.fromEntries([...README.matchAll(/<!-- readme-file: ([\w.-]+) -->\n```ts\n([\s\S]*?)\n```/g)].map((match) => [match[1]!, match[2]!]));
  for (const name of ['my-agent.ts', 'my-agent.dev.ts', 'my-agent.test.ts', 'my-agent.node-test.ts', 'app.ts']) if (!files[name]) throw new Error(`README.md has no <!-- readme-file: ${name} --> block`);
  return files;
}

/** The one match of `pattern`'s first group in the README, or a failure naming what is missing. */
export function readmeInline(pattern: RegExp, what: string): string {
  const found = pattern.exec(README)?.[1];
  if (found === undefined) throw new Error(`README.md has no ${what} (${pattern})`);
  return found;
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

