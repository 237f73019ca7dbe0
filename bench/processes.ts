import { spawn } from 'node:child_process';

/**
 * Runs a benchmark script (`bench/<file>.ts`) as its own process with a JSON job. `onLine` gets
 * each line it prints on stdout, `onStderr` everything it prints on stderr (with the process, to
 * kill it). Resolves with how it ended.
 */
export function benchProcess(
  file: string,
  job: object,
  handlers: { onLine?: (line: string) => void; onStderr?: (text: string, kill: () => void) => void } = {},
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', new URL(file, import.meta.url).pathname, JSON.stringify(job)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
    });
    let stdout = '';
    let stderr = '';
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk;
      pending += chunk;
      const lines = pending.split('\n');
      pending = lines.pop()!;
      for (const line of lines) if (line) handlers.onLine?.(line);
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk;
      handlers.onStderr?.(stderr, () => child.kill('SIGKILL'));
    });
    child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
