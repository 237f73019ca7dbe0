import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { cachedTemplate, sourcesHash } from '../../local/template-cache.js';

// The template cache's hit path: no synthesis (that is the engine tier's), only the file the hash names.
describe('the synthesized template cache', () => {
  const dirs: string[] = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('reads the template cached for the current sources, without synthesizing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-template-cache-'));
    dirs.push(dir);
    const template = { Resources: { Marker: { Type: 'Test::Only' } } };
    writeFileSync(join(dir, `template-refund-reconciler-${sourcesHash()}.json`), JSON.stringify(template));
    expect(await cachedTemplate('refund-reconciler', { dir })).toEqual(template);
  });

  it('names its sources by a stable hash', () => {
    expect(sourcesHash()).toMatch(/^[0-9a-f]{16}$/);
    expect(sourcesHash()).toBe(sourcesHash());
  });
});
