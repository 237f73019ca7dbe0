import { spawn } from 'node:child_process';

export interface ProcessEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface ProcessHandlers {
  /** Each line it prints on stdout, as it comes. */
  onLine?: (line: string) => void;
  /** Everything it printed on stderr so far, with the process, to kill it. */
  onStderr?: (text: string, kill: () => void) => void;
}

/**
 * Runs a benchmark script (`bench/<file>.ts`) as its own process with a JSON job. Resolves with
 * how it ended.
 */
export function benchProcess(file: string, job: object, handlers: ProcessHandlers = {}): Promise<ProcessEnd> {
  return nodeProcess(['--import', 'tsx', new URL(file, import.meta.url).pathname, JSON.stringify(job)], handlers);
}

/** Runs `node <args>` with what it prints collected (stdin closed). Resolves with how it ended. */
export function nodeProcess(args: string[], handlers: ProcessHandlers = {}): Promise<ProcessEnd> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, args, {
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
