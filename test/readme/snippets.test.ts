import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fencedBlocks } from './markdown.js';
import { DOC_FILES } from './readme-text.js';
import { RUN_BY, unaccountedBlocks } from './snippets.js';

/**
 * Every code block of the README and of each guide in docs/ is run by a test of the packed package
 * (test/readme/own-agent.test.ts, test/client/package-app.test.ts), or is shown output (`text`), a
 * checkout's command or a fragment, marked with why (test/readme/snippets.ts). A block added later,
 * in a guide added later too, is found here with no list to update but RUN_BY.
 */
const ROOT = new URL('../../', import.meta.url);
const sourceOf = (test: string) => readFileSync(new URL(test, ROOT), 'utf8');

describe('the code blocks of the README and the guides', () => {
  it('are each run by a test of the packed package, or marked as output, a checkout command or a fragment, with why', () => {
    const blocks = [...DOC_FILES.values()].flatMap((text) => fencedBlocks(text));
    expect(blocks.length).toBeGreaterThan(40);
    expect(unaccountedBlocks(DOC_FILES, RUN_BY, sourceOf)).toEqual([]);
  });

  it('keeps fragments rare: fewer fragments than a tenth of the blocks', () => {
    const blocks = [...DOC_FILES.values()].flatMap((text) => fencedBlocks(text));
    const fragments = blocks.filter((block) => block.mark?.startsWith('fragment:'));
    expect(fragments.length).toBeLessThan(blocks.length / 10);
  });

  it('fails on doctored markdown: a block nobody runs, a block with no language, a name no test takes, a fragment with no reason, a stale entry', () => {
    const doc = [
      '# Guide',
      '',
      '```ts',
      "defineTool({ name: 'x', … });",
      '```',
      '',
      '```',
      'plain',
      '```',
      '',
      '1. In a list:',
      '',
      '   <!-- snippet: listed -->',
      '   ```sh',
      '   npx savepoint run',
      '   ```',
      '',
      '<!-- readme-file: unnamed.ts -->',
      '```ts',
      'export {};',
      '```',
      '',
      '<!-- fragment: why -->',
      '```js',
      'x',
      '```',
      '',
      '<!-- snippet: elsewhere -->',
      '```sh',
      'npx savepoint status',
      '```',
      '',
      '```text',
      'shown output',
      '```',
    ].join('\n');
    const runBy = { listed: 'test/readme/own-agent.test.ts', 'unnamed.ts': 'test/readme/own-agent.test.ts', elsewhere: 'test/unit/x.test.ts', gone: 'test/client/package-app.test.ts' };
    const sources: Record<string, string> = { 'test/readme/own-agent.test.ts': "snippet('listed');", 'test/client/package-app.test.ts': '' };
    expect(unaccountedBlocks(new Map([['docs/guide.md', doc]]), runBy, (test) => sources[test]!)).toEqual([
      expect.stringMatching(/^docs\/guide\.md:3: a ts block no test of the packed package runs/),
      'docs/guide.md:7: a code block without a language (text for shown output)',
      "docs/guide.md:19: unnamed.ts: test/readme/own-agent.test.ts never takes it ('unnamed.ts'), so it does not run it",
      'docs/guide.md:24: <!-- fragment: … --> needs a reason (what runs it, or why it cannot run), got "why"',
      expect.stringMatching(/^docs\/guide\.md:29: elsewhere is run by test\/unit\/x\.test\.ts, which is not a test of the packed package/),
      'RUN_BY lists gone, which no block of README.md or docs/*.md is marked with',
    ]);
    // The indented block in the list item is found, marked, and its text is the command without the list's indentation.
    expect(fencedBlocks(doc).find((block) => block.mark === 'snippet: listed')).toMatchObject({ line: 14, lang: 'sh', body: 'npx savepoint run' });
  });

  it('fails on the real README with a runnable block unmarked', () => {
    const doctored = new Map(DOC_FILES);
    doctored.set('docs/effects.md', `${DOC_FILES.get('docs/effects.md')!}\n\n\`\`\`ts\nconst client = await connect({ stateDir: '.savepoint' });\n\`\`\`\n`);
    const problems = unaccountedBlocks(doctored, RUN_BY, sourceOf);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^docs\/effects\.md:\d+: a ts block no test of the packed package runs/);
  });
});
