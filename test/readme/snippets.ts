import { fencedBlocks } from './markdown.js';

/**
 * Every code block of the README and the guides is accounted for (issue 39, item 3: "every runnable
 * snippet in README and docs run by a test from a package outside the repository"). A fenced block
 * is one of:
 *
 * - shown output or a picture of the tree: language `text`, nothing to run;
 * - run by a test of the packed package: marked `<!-- readme-file: name -->` (a file the test writes
 *   into its package) or `<!-- snippet: id -->` (a block the test takes with `snippet(id)`), and
 *   listed in {@link RUN_BY} with that test, whose source names it;
 * - a command of a checkout of this repository, not of the package (`npm test`, `npm run bench`, the
 *   example app of infra/app.ts): marked `<!-- checkout: <what runs it> -->`;
 * - not runnable as it stands: marked `<!-- fragment: <why> -->`. Keep these rare: a fragment that
 *   can be made a whole file is made one and run.
 *
 * A block with no language, or none of these, fails test/readme/snippets.test.ts, named.
 */

/** The tests that install savepoint from `npm pack` into a package outside the repository (one install each). */
export const PACKAGE_TESTS = ['test/readme/own-agent.test.ts', 'test/client/package-app.test.ts'] as const;
type PackageTest = (typeof PACKAGE_TESTS)[number];
const OWN_AGENT: PackageTest = 'test/readme/own-agent.test.ts';
const PACKAGE_APP: PackageTest = 'test/client/package-app.test.ts';

/** Each marked block (its readme-file name or snippet id) and the test of the packed package that runs it. */
export const RUN_BY: Readonly<Record<string, PackageTest>> = {
  // README.md
  install: OWN_AGENT,
  'my-agent.ts': OWN_AGENT,
  'my-agent.dev.ts': OWN_AGENT,
  'run-own-agent': OWN_AGENT,
  'app.ts': OWN_AGENT,
  'digest.ts': OWN_AGENT,
  'runs-app.ts': PACKAGE_APP,
  'run-events-curl': PACKAGE_APP,
  'mcp-host-config': PACKAGE_APP,
  // docs/applications.md
  'events-app.ts': PACKAGE_APP,
  // docs/approvals.md
  'approvals-app.ts': OWN_AGENT,
  // docs/cli.md
  serve: OWN_AGENT,
  'json-report': OWN_AGENT,
  // docs/crashes-and-recovery.md
  'crash-injection': OWN_AGENT,
  // docs/effects.md
  'refund-tool.ts': OWN_AGENT,
  // docs/mcp.md
  'serve-for-mcp': OWN_AGENT,
  'mcp-server.ts': PACKAGE_APP,
  // docs/model-providers.md
  'settings-app.ts': OWN_AGENT,
  'real-providers': OWN_AGENT,
  'models-app.ts': OWN_AGENT,
  // docs/operating-on-aws.md
  'synth-and-deploy': OWN_AGENT,
  // docs/replay-and-fork.md
  'replay-transcript': OWN_AGENT,
  'fork-transcript': OWN_AGENT,
  'fork-request': OWN_AGENT,
  // docs/testing.md
  'my-agent.test.ts': OWN_AGENT,
  'my-agent.node-test.ts': OWN_AGENT,
  // docs/traces.md
  'traces-local': OWN_AGENT,
  'traced-app.ts': OWN_AGENT,
};

const escaped = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** How a test takes a block: a snippet by `snippet('<id>')`, a file by its name in quotes (`'runs-app.ts'`, `'./my-agent.ts'`). */
const named = (kind: 'readme-file' | 'snippet', name: string) => (kind === 'snippet' ? new RegExp(`\\bsnippet\\((['"])${escaped(name)}\\1\\)`) : new RegExp(`['"\`/]${escaped(name)}['"\`]`));

/**
 * What is wrong with the code blocks of `files` (path → markdown): each block that is neither
 * shown output (`text`), nor marked and run by the test `runBy` names (whose source, `sourceOf`,
 * names the block in quotes), nor marked a checkout's command or a fragment with a reason; and each
 * entry of `runBy` no block is marked with. Empty when every block is accounted for.
 */
export function unaccountedBlocks(files: ReadonlyMap<string, string>, runBy: Readonly<Record<string, string>>, sourceOf: (test: string) => string): string[] {
  const problems: string[] = [];
  const marked = new Set<string>();
  for (const [path, text] of files) {
    for (const block of fencedBlocks(text)) {
      const at = `${path}:${block.line}`;
      if (block.lang === '') {
        problems.push(`${at}: a code block without a language (text for shown output)`);
        continue;
      }
      if (block.lang === 'text') continue;
      const [, kind, value = ''] = /^(readme-file|snippet|checkout|fragment): (.*)$/s.exec(block.mark ?? '') ?? [];
      if (kind === 'checkout' || kind === 'fragment') {
        // A reason a reader can act on: what runs it (a checkout's command), or why nothing can.
        if (value.trim().split(/\s+/).length < 4) problems.push(`${at}: <!-- ${kind}: … --> needs a reason (what runs it, or why it cannot run), got ${JSON.stringify(value)}`);
        continue;
      }
      if (kind === undefined) {
        problems.push(`${at}: a ${block.lang} block no test of the packed package runs: mark it <!-- snippet: id --> (or readme-file: name) and list it in RUN_BY (test/readme/snippets.ts), or mark it <!-- fragment: why it cannot run -->`);
        continue;
      }
      marked.add(value);
      const test = runBy[value];
      if (test === undefined) {
        problems.push(`${at}: <!-- ${kind}: ${value} --> is run by no test: RUN_BY (test/readme/snippets.ts) does not list it`);
        continue;
      }
      if (!PACKAGE_TESTS.includes(test as PackageTest)) problems.push(`${at}: ${value} is run by ${test}, which is not a test of the packed package (${PACKAGE_TESTS.join(', ')})`);
      else if (!named(kind as 'readme-file' | 'snippet', value).test(sourceOf(test))) problems.push(`${at}: ${value}: ${test} never takes it (${kind === 'snippet' ? `snippet('${value}')` : `'${value}'`}), so it does not run it`);
    }
  }
  for (const name of Object.keys(runBy)) if (!marked.has(name)) problems.push(`RUN_BY lists ${name}, which no block of README.md or docs/*.md is marked with`);
  return problems;
}
