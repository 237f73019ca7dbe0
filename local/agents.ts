import { existsSync, readdirSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AgentDefinition } from '../lambdas/define.js';

const PACKAGE_ROOT = new URL('..', import.meta.url).pathname;

/**
 * Where agents are found by name: `<root>/agents/<name>/agent.ts`. A name the user asked for
 * (`--agent`, $SAVEPOINT_AGENT) is looked for in the working directory, then in the package. A
 * name only recorded in a run (what `status` reads) is looked for in the package first: a command
 * that merely reads a run must not run a module someone left in the current directory under the
 * name of one of the project's own agents.
 */
function searchRoots(origin: AgentOrigin): string[] {
  return origin === 'asked' ? [process.cwd(), PACKAGE_ROOT] : [PACKAGE_ROOT, process.cwd()];
}

/** Who named the agent: the user (`asked`), or a run's record (`recorded`). */
export type AgentOrigin = 'asked' | 'recorded';

/** The module file of an agent named `spec`, or the file `spec` itself when it is a path. */
export function agentModulePath(spec: string, origin: AgentOrigin = 'asked'): string {
  if (spec.includes('/') || spec.endsWith('.ts') || spec.endsWith('.js')) {
    const path = isAbsolute(spec) ? spec : resolve(spec);
    if (!existsSync(path)) throw new AgentNotFoundError(`agent: no file ${path}`);
    return path;
  }
  for (const root of searchRoots(origin)) {
    const path = resolve(root, 'agents', spec, 'agent.ts');
    if (existsSync(path)) return path;
  }
  throw new AgentNotFoundError(`agent: no agent named ${JSON.stringify(spec)} (looked for agents/${spec}/agent.ts here and in savepoint's examples; or pass the path of its module)`);
}

export class AgentNotFoundError extends Error {
  override readonly name = 'Agent.InvalidInput';
}

/**
 * Loads an agent module: its default export, or its only export that is an agent definition. The
 * module is the user's code: what it exports is checked, not trusted.
 */
export async function loadAgent(spec: string, origin: AgentOrigin = 'asked'): Promise<{ agent: AgentDefinition; module: string }> {
  const module = agentModulePath(spec, origin);
  const exports = (await (bundle()?.importAgent(module) ?? import(pathToFileURL(module).href))) as Record<string, unknown>;
  const candidates = [exports['default'], ...Object.values(exports)].filter(isAgent);
  const agent = candidates[0];
  if (!agent) throw new AgentNotFoundError(`agent: ${module} exports no agent (export default defineAgent({ … }))`);
  return { agent, module };
}

/**
 * The CLI bundle this process runs from, if it does (bin/savepoint.js sets it): an agent is then
 * bundled against it, so that it shares the harness's modules instead of loading their sources.
 */
function bundle(): { importAgent(modulePath: string): Promise<unknown> } | undefined {
  return (globalThis as Record<symbol, { importAgent(modulePath: string): Promise<unknown> } | undefined>)[Symbol.for('savepoint.bundle')];
}

function isAgent(value: unknown): value is AgentDefinition {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<AgentDefinition>;
  return typeof candidate.name === 'string' && typeof candidate.prompt === 'function' && Array.isArray(candidate.tools) && typeof candidate.system === 'string';
}

/** The agents found by name (`agents/<name>/agent.ts` under each search root), for the message that asks for one. */
export function knownAgents(): string[] {
  const names = searchRoots('asked').flatMap((root) => {
    const dir = resolve(root, 'agents');
    return existsSync(dir) ? readdirSync(dir).filter((name) => existsSync(resolve(dir, name, 'agent.ts'))) : [];
  });
  return [...new Set(names)].sort();
}
