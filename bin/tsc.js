#!/usr/bin/env node
// The project's compiler, TypeScript 7's native `tsc` (a Go program), as the type check (`npm test`,
// `npm run typecheck`: `node bin/tsc.js -p . --checkers 1`), the build (bin/build.js) and the API
// report (bin/api.js) run it: with Go's collector set to run at 4× its default heap growth
// (GOGC=400) unless GOGC is set. The compiler's heap is mostly what it keeps to the end (the
// program's types), so at the default it collects again and again to free little: the type check
// (`-p . --checkers 1`) took 7.1–9.2 s of CPU (user + system, median 7.8) at GOGC=100 and 5.3–6.7 s
// (median 5.7) at 400, in 5 alternated pairs at load 3.5–8.7, its peak memory 1.40–1.46 GB against
// 1.42–1.48 GB; the build's compile 6.9–7.2 s against 5.9–6.5 s (3 pairs). The same output: only
// when the collector runs changes.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

// TypeScript's package exports no bin path: its bin is found next to its package.json.
const TSC = join(dirname(createRequire(import.meta.url).resolve('typescript/package.json')), 'bin/tsc');

/** The environment a compile runs in: this process's, with GOGC=400 unless it sets GOGC itself. */
export const compilerEnv = () => ({ ...process.env, GOGC: process.env.GOGC ?? '400' });

/** Runs `tsc <args>` in `cwd`, its output on this process's; throws (with its exit status) when it fails. */
export function tsc(args, cwd) {
  const { status, signal, error } = spawnSync(process.execPath, [TSC, ...args], { stdio: 'inherit', cwd, env: compilerEnv() });
  if (error) throw error;
  if (status !== 0) throw Object.assign(new Error(`tsc ${args.join(' ')}: ${signal ?? `exit ${status}`}`), { status: status ?? 1 });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  try {
    tsc(process.argv.slice(2), process.cwd());
  } catch (error) {
    process.exitCode = error.status ?? 1;
  }
}
