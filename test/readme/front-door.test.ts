import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { fencedBlocks, linksOf } from './markdown.js';
import { DOC_FILES, shellWords } from './readme-text.js';

/**
 * The README is the front door (issue 39, item 3): at most 500 lines; the two commands of a fresh
 * machine first — the install and the main job (`npm start`), then the tests — each a script of
 * package.json; and a map that links every guide of docs/, so a guide added later is reached from
 * it (or fails here, named).
 */
const README = DOC_FILES.get('README.md')!;
const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { scripts: Record<string, string> };

describe('the README', () => {
  it('is at most 500 lines', () => {
    expect(README.split('\n').length).toBeLessThanOrEqual(500);
  });

  it('opens with the two commands of a fresh machine: install and npm start, then npm test, each a script of package.json', () => {
    // The first block, first in the file (its mark, a checkout's commands, on the line before it).
    const [first] = fencedBlocks(README);
    expect(first).toMatchObject({ line: 2, lang: 'sh', mark: expect.stringMatching(/^checkout: /) });
    const commands = first!.body.split('\n').map(shellWords);
    expect(commands).toEqual([
      ['npm', 'ci', '&&', 'npm', 'start'],
      ['npm', 'test'],
    ]);
    expect(pkg.scripts['start']).toMatch(/^node bin\/savepoint\.js run /);
    expect(pkg.scripts['test']).toMatch(/vitest run$/);
  });

  it('links every guide of docs/ from its map', () => {
    const guides = [...DOC_FILES.keys()].filter((path) => path.startsWith('docs/'));
    expect(guides.length).toBeGreaterThanOrEqual(15);
    const map = README.slice(README.indexOf('\n## Where to read next\n'));
    expect(map.length).toBeLessThan(README.length);
    const linked = new Set(linksOf(map).map((link) => link.split('#')[0]));
    expect(guides.filter((guide) => !linked.has(guide))).toEqual([]);
  });
});
