import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { anchorsOf, brokenLinks, linksOf } from './markdown.js';
import { DOC_FILES } from './readme-text.js';

/**
 * The README, every guide of docs/ (each docs/*.md, a new one included), MIGRATING.md and the
 * CHANGELOG: every relative link
 * reaches a file of the repository, and every `#anchor` a heading of the file it names. A guide
 * moved or a heading renamed without its links fails here, naming the link.
 */
const ROOT = new URL('../../', import.meta.url).pathname;
const CHECKED = new Map([...DOC_FILES, ...['MIGRATING.md', 'CHANGELOG.md'].map((path) => [path, readFileSync(ROOT + path, 'utf8')] as const)]);

describe('the links of the README, the guides, MIGRATING.md and the CHANGELOG', () => {
  it('reach a file that exists and a heading it has', () => {
    const links = [...CHECKED.values()].flatMap(linksOf);
    // The scan finds what it should: the map of guides, anchors into them, the screenshots.
    expect(links).toEqual(expect.arrayContaining(['docs/cli.md', 'docs/operating-on-aws.md#deploy', 'console-runs.png', 'docs/approvals.md']));
    expect(brokenLinks(ROOT, CHECKED)).toEqual([]);
  });

  it('would notice a missing file, a missing heading and an anchor into a file that has none', () => {
    const files = new Map([
      ['README.md', '# Top\n\n## Deploy\n\nSee [a](docs/nowhere.md), [b](docs/guide.md#deploy), [c](#deploy), [d](#gone), [e](package.json#x), `[f](docs/nowhere.md)`, [g](https://example.com/#x).\n\n```md\n[h](docs/nowhere.md)\n```'],
      ['docs/guide.md', '# Guide\n\n## Deploy\n\n### Deploy\n\n[back](../README.md#top) and [twice](#deploy-1) and [thrice](#deploy-2)'],
    ]);
    expect(brokenLinks(ROOT, files).map((problem) => problem.replace(/:.*$/, '') + ' ' + problem.split(': ')[1])).toEqual([
      'README.md docs/nowhere.md',
      'README.md #gone',
      'README.md package.json#x',
      'docs/guide.md #deploy-2',
    ]);
  });

  it('names anchors as GitHub does: punctuation and code marks dropped, a repeated heading numbered', () => {
    expect([...anchorsOf('# savepoint\n## What `npm start` does\n### Deploy\n#### Deploy\n## Traces (OpenTelemetry GenAI)\n```\n# not a heading\n```')]).toEqual([
      'savepoint',
      'what-npm-start-does',
      'deploy',
      'deploy-1',
      'traces-opentelemetry-genai',
    ]);
  });
});
