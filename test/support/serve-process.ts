import { spawn, type ChildProcess } from 'node:child_process';
import { servedAt } from '../../client/connect.js';

/** `savepoint serve` as its own process (bin/savepoint.js), ready to take runs. */
export interface Serving {
  child: ChildProcess;
  /** What it printed so far (stdout and stderr). */
  output: () => string;
  exited: Promise<number | null>;
}

const bin = new URL('../../bin/savepoint.js', import.meta.url).pathname;

/** Starts `savepoint serve` and resolves once it says it is ready; `children` collects it for the test's cleanup. */
export async function startServe(args: string[], children: Set<ChildProcess>): Promise<Serving> {
  const child = spawn(process.execPath, [bin, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(child);
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (/^savepoint: ready$/m.test(output)) resolve();
    });
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    void exited.then((code) => reject(new Error(`serve exited ${code} before it was ready:\n${output}`)));
  });
  return { child, output: () => output, exited };
}

/**
 * What `connect({ stateDir })` looks serve up with (`servedAt`), watched: `failed()` counts the
 * lookups that found no serve, and `askedAgain` resolves at the second (a call in the gap, then
 * asking again after its pause). Give `locate` to `runsClient` as `connect` does.
 */
export function watchedLookups(stateDir: string): { locate: () => ReturnType<typeof servedAt>; failed: () => number; askedAgain: Promise<void> } {
  let failed = 0;
  let second!: () => void;
  const askedAgain = new Promise<void>((resolve) => (second = resolve));
  const locate = () => {
    try {
      return servedAt(stateDir);
    } catch (error) {
      if (++failed === 2) second();
      throw error;
    }
  };
  return { locate, failed: () => failed, askedAgain };
}
