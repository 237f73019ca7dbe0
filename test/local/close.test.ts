import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

it('close() with a pending task token lets the process exit', () => {
  const script = fileURLToPath(new URL('./fixtures/pending-token.ts', import.meta.url));
  const child = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 8000 });
  expect(child.signal, `killed: the process hung after close()\n${child.stderr}`).toBeNull();
  expect(child.stderr).toBe('');
  expect(child.status).toBe(0);
  expect(child.stdout.trim()).toBe('ABORTED');
});
