import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { agentModulePath } from '../../local/runtime/agents.js';

const dir = mkdtempSync(join(tmpdir(), 'savepoint-agent-path-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('an agent named by its path', () => {
  it('is its module file; a path to nothing, or to a directory, is refused naming what to pass', () => {
    const file = join(dir, 'my-agent.ts');
    writeFileSync(file, 'export default {};\n');
    expect(agentModulePath(file)).toBe(file);
    expect(() => agentModulePath(join(dir, 'gone.ts'))).toThrow(`agent: no file ${join(dir, 'gone.ts')}`);
    expect(() => agentModulePath(`${dir}/`)).toThrow(new RegExp(`^agent: ${dir}/? is a directory; pass the path of the agent's module in it \\(e\\.g\\. ${dir}/agent\\.ts\\)$`));
  });
});
