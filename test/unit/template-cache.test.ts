import { chmodSync, chownSync, existsSync, lchownSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { batchTemplateCacheFile, cachedBatchTemplate, readCachedTemplate, sourcesHash, templateCacheFile, templateKey, validatedDefinitions } from '../../local/template/cache.js';

// The template cache's hit path and what it trusts: no synthesis (that is the engine tier's), only
// the files the key names. Two copies of savepoint at other paths: test/infra/template-paths.test.ts.

/** A uid that is not ours, for files "planted by another user": only root can give a file away. */
const OTHER_UID = 65534;
const asRoot = process.getuid?.() === 0;
if (!asRoot) console.log('skipping the template cache tests of entries owned by another user: not running as root, cannot chown');

const template = { Resources: { Marker: { Type: 'Test::Only' } } };

describe('the synthesized template cache', () => {
  const dirs: string[] = [];
  const env = { ...process.env };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
    for (const name of ['SAVEPOINT_CACHE_DIR', 'CDK_CONTEXT_JSON']) {
      if (env[name] === undefined) delete process.env[name];
      else process.env[name] = env[name];
    }
  });
  /** A fresh cache directory (mkdtemp makes it 0700) holding the refund reconciler's template, as this copy names it. */
  const cacheWithEntry = () => {
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-template-cache-'));
    dirs.push(dir);
    const file = templateCacheFile('refund-reconciler', { dir });
    writeFileSync(file, JSON.stringify(template), { mode: 0o600 });
    return { dir, file };
  };
  const read = (dir: string) => {
    const notes: string[] = [];
    return { template: readCachedTemplate('refund-reconciler', { dir, onNote: (note) => notes.push(note) }), notes };
  };

  it('reads the template cached under the current key, without synthesizing', () => {
    const { dir } = cacheWithEntry();
    expect(read(dir)).toEqual({ template, notes: [] });
  });

  it("reads the batch state machine's template cached under the current key, without synthesizing (a process of a checkout that runs a batch loads no CDK)", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-template-cache-'));
    dirs.push(dir);
    const file = batchTemplateCacheFile({ dir });
    expect(file).toBe(join(dir, `batch-template-${templateKey()}.json`));
    writeFileSync(file, JSON.stringify(template), { mode: 0o600 });
    expect(await cachedBatchTemplate({ dir })).toEqual(template);
  });

  it('names its entries by a stable key that the CDK context of the process changes', () => {
    expect(sourcesHash()).toMatch(/^[0-9a-f]{16}$/);
    expect(templateKey()).toMatch(/^[0-9a-f]{16}$/);
    expect(templateKey()).toBe(templateKey());
    const plain = templateKey();
    process.env['CDK_CONTEXT_JSON'] = JSON.stringify({ '@aws-cdk/aws-lambda:recognizeVersionProps': false });
    expect(templateKey()).not.toBe(plain);
  });

  it('keeps its default directory per user, made 0700 when first written', () => {
    delete process.env['SAVEPOINT_CACHE_DIR'];
    expect(templateCacheFile('a').startsWith(join(tmpdir(), `savepoint-cache-${process.getuid?.()}`, 'template-a-'))).toBe(true);
    const parent = mkdtempSync(join(tmpdir(), 'savepoint-template-cache-'));
    dirs.push(parent);
    const dir = join(parent, 'new', 'cache');
    validatedDefinitions({ dir }).add('{"StartAt":"A"}');
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(validatedDefinitions({ dir }).has('{"StartAt":"A"}')).toBe(true);
  });

  it('does not use an entry other users can write', () => {
    const { dir, file } = cacheWithEntry();
    chmodSync(file, 0o666);
    expect(read(dir)).toEqual({ template: undefined, notes: [`${file} can be written by other users (mode 666): not used; synthesizing again`] });
  });

  it('does not use an entry that is a link, wherever it points', () => {
    const { dir, file } = cacheWithEntry();
    const elsewhere = join(dir, 'elsewhere.json');
    writeFileSync(elsewhere, JSON.stringify(template), { mode: 0o600 });
    rmSync(file);
    symlinkSync(elsewhere, file);
    expect(read(dir)).toEqual({ template: undefined, notes: [`${file} is a symbolic link: not used`] });
  });

  it('does not use a directory other users can write, nor a marker in it', () => {
    const { dir } = cacheWithEntry();
    validatedDefinitions({ dir }).add('{"StartAt":"A"}');
    chmodSync(dir, 0o777);
    const { template: found, notes } = read(dir);
    expect(found).toBeUndefined();
    expect(notes).toEqual([expect.stringContaining(`${dir} can be written by other users (mode 777): the template cache is not used`)]);
    expect(validatedDefinitions({ dir }).has('{"StartAt":"A"}')).toBe(false);
  });

  it.runIf(asRoot)('does not use an entry, a marker or a directory owned by another user', () => {
    const { dir, file } = cacheWithEntry();
    validatedDefinitions({ dir }).add('{"StartAt":"A"}');
    chownSync(file, OTHER_UID, OTHER_UID);
    expect(read(dir)).toEqual({ template: undefined, notes: [`${file} is owned by another user (uid ${OTHER_UID}): not used; synthesizing again`] });
    const marker = readdirSync(dir).find((name) => name.startsWith('valid-asl-'))!;
    chownSync(join(dir, marker), OTHER_UID, OTHER_UID);
    expect(validatedDefinitions({ dir }).has('{"StartAt":"A"}')).toBe(false);
    // Ours again, then the directory given away: nothing in it is used.
    chownSync(file, 0, 0);
    chownSync(join(dir, marker), 0, 0);
    expect(read(dir).template).toEqual(template);
    expect(validatedDefinitions({ dir }).has('{"StartAt":"A"}')).toBe(true);
    chownSync(dir, OTHER_UID, OTHER_UID);
    expect(read(dir)).toEqual({ template: undefined, notes: [expect.stringContaining(`${dir} is owned by another user (uid ${OTHER_UID}): the template cache is not used`)] });
    expect(validatedDefinitions({ dir }).has('{"StartAt":"A"}')).toBe(false);
  });

  it.runIf(asRoot)("does not use, nor create anything through, a cache directory reached by another user's symbolic link, however good its target", () => {
    const { dir } = cacheWithEntry();
    validatedDefinitions({ dir }).add('{"StartAt":"A"}');
    expect(read(dir).template).toEqual(template);
    // Another user's link (in a shared /tmp, at the default path) to our own, private cache: its owner picks the target.
    const link = `${dir}-link`;
    symlinkSync(dir, link);
    dirs.push(link);
    expect(read(link).template).toEqual(template); // ours: followed
    lchownSync(link, OTHER_UID, OTHER_UID);
    expect(read(link)).toEqual({ template: undefined, notes: [expect.stringContaining(`${link} is a symbolic link owned by another user (uid ${OTHER_UID}): the template cache ${link} is not used`)] });
    expect(validatedDefinitions({ dir: link }).has('{"StartAt":"A"}')).toBe(false);
    // A link to a directory that does not exist yet: nothing is created through it; nor below a link above it.
    const dangling = `${dir}-dangling`;
    symlinkSync(`${dir}-target`, dangling);
    lchownSync(dangling, OTHER_UID, OTHER_UID);
    dirs.push(dangling, `${dir}-target`);
    validatedDefinitions({ dir: dangling }).add('{"StartAt":"B"}');
    validatedDefinitions({ dir: join(link, 'below') }).add('{"StartAt":"B"}');
    expect(existsSync(`${dir}-target`)).toBe(false);
    expect(existsSync(join(dir, 'below'))).toBe(false);
    expect(read(join(link, 'below')).notes).toEqual([expect.stringContaining(`${link} is a symbolic link owned by another user`)]);
  });
});
