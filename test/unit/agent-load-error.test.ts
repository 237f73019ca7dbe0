import { describe, expect, it } from 'vitest';
import { agentLoadError } from '../../local/runtime/agent-load-error.js';

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
