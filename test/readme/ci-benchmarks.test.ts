import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readmeInline } from './readme-text.js';

/**
 * README's "Every benchmark in CI" block is what `.ci/run` runs: the benchmarks are the repository's
 * (bench/ is not in the package), so the block is run by CI itself, and this keeps the two the same.
 */
describe("README's benchmark lines", () => {
  it('are the lines .ci/run runs, in its order', () => {
    const shown = readmeInline(/handlers on 50 runs\) add about 45 s:\n\n<!-- checkout: [^\n]* -->\n```sh\n([\s\S]*?)\n```/, "the CI benchmarks' block").split('\n');
    const run = readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8')
      .split('\n')
      .filter((line) => line.startsWith('node --import tsx bench/'));
    expect(run.length).toBeGreaterThan(5);
    expect(shown).toEqual(run);
  });
});
