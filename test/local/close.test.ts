import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

// A hang never ends: 40 s tells it apart from a slow start on a loaded machine (8 s did not, at load 14).
it('close() with a pending task token lets the process exit', { timeout: 60_000 }, () => {
  const script = fileURLToPath(new URL('./fixtures/pending-token.ts', import.meta.url));
  const child = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 40_000 });
  expect(child.signal, `killed: the process hung after close()\n${child.stderr}`).toBeNull();
  expect(child.stderr).toBe('');
  expect(child.status).toBe(0);
  expect(child.stdout.trim()).toBe('ABORTED');
});
