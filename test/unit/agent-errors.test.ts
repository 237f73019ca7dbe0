import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';
import { agentLoadError, sourceMappedStack } from '../../local/runtime/agent-errors.js';

const OWN = '/opt/savepoint';
const thrown = (message: string, ...frames: string[]) => Object.assign(new Error(message), { stack: [`Error: ${message}`, ...frames.map((frame) => `    at ${frame}`)].join('\n') });

describe('agentLoadError', () => {
  it("names the module and the first frame of the user's code, past savepoint's own frames and node_modules'", () => {
    const error = thrown(
      'name: expected letters',
      `defineAgent (file://${OWN}/lambdas/define.js:40:11)`,
      'parse (/home/me/app/node_modules/zod/index.js:1:2)',
      'file:///home/me/app/my-agent.ts:12:16',
      'ModuleJob.run (node:internal/modules/esm/module_job:271:25)',
    );
    const wrapped = agentLoadError('/home/me/app/my-agent.dev.ts', error, [OWN]);
    expect(wrapped?.message).toBe('agent /home/me/app/my-agent.dev.ts failed to load: name: expected letters (at /home/me/app/my-agent.ts:12:16)');
    expect(wrapped?.cause).toBe(error);
  });

  it('reads an async frame and a frame without a function name', () => {
    expect(agentLoadError('/a/agent.ts', thrown('x', 'async file:///a/agent.ts:3:4'), [OWN])?.message).toBe('agent /a/agent.ts failed to load: x (at /a/agent.ts:3:4)');
    expect(agentLoadError('/a/agent.ts', thrown('x', '/a/tools.ts:7:1'), [OWN])?.message).toBe('agent /a/agent.ts failed to load: x (at /a/tools.ts:7:1)');
  });

  it("leaves an error with no frame of the user's code as it is (savepoint's own: a failed build, esbuild missing), and a thrown non-error", () => {
    expect(agentLoadError('/a/agent.ts', thrown('agent /a/agent.ts does not compile', `build (${OWN}/bin/bundle.js:300:9)`, 'node:internal/process/task_queues:105:5'), [OWN])).toBeUndefined();
    expect(agentLoadError('/a/agent.ts', thrown('x', `f (/a/node_modules/esbuild/lib/main.js:1:1)`), [OWN])).toBeUndefined();
    expect(agentLoadError('/a/agent.ts', 'a string', [OWN])).toBeUndefined();
  });
});

describe('sourceMappedStack', () => {
  it("puts a bundled file's frames back where they were written, through the map beside it, and leaves the others", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'savepoint-stacks-'));
    try {
      const source = join(dir, 'tool.ts');
      writeFileSync(source, "export function execute(input: { list?: string[] }) {\n  const settings = undefined as unknown as { url: string };\n  return settings.url + String(input.list);\n}\n");
      const bundled = join(dir, 'out', 'agent.js');
      await build({ entryPoints: [source], bundle: true, format: 'esm', platform: 'node', sourcemap: 'linked', outfile: bundled, logLevel: 'silent' });
      // Where the bundle reads `settings.url`: its line and column as a stack would name them.
      const lines = readFileSync(bundled, 'utf8').split('\n');
      const row = lines.findIndex((line) => line.includes('settings.url'));
      const column = lines[row]!.indexOf('settings.url') + 'settings.'.length + 1;
      const stack = ['TypeError: x', `    at execute (file://${bundled}:${row + 1}:${column})`, '    at node:internal/process/task_queues:105:5', '    at run (/opt/app/plain.js:3:4)'].join('\n');
      expect(sourceMappedStack(stack)).toBe(['TypeError: x', `    at execute (${source}:3:19)`, '    at node:internal/process/task_queues:105:5', '    at run (/opt/app/plain.js:3:4)'].join('\n'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
