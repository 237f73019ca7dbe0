import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DEV_MODULE, isAgentDefinition, type AgentDefinition } from '../../lambdas/define.js';
import { agentLoadError } from './agent-errors.js';

/**
 * savepoint's own package root, where its example agents are: this file is in `<root>/local/runtime/` in a
 * checkout and in `<root>/dist/local/runtime/` in an installed package.
 */
const PACKAGE_ROOT = (() => {
  const here = fileURLToPath(new URL('../..', import.meta.url));
  return existsSync(resolve(here, 'package.json')) ? here : dirname(here);
})();

/** Where savepoint's own code is (not the user's: agent-errors.ts). */
export const SAVEPOINT_CODE: readonly string[] = [PACKAGE_ROOT];

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

/** Whether `--agent <spec>` names a module's path (`./my-agent.ts`, `agents/x/agent.ts`) rather than an agent's name. */
export function isAgentPath(spec: string): boolean {
  return spec.includes('/') || spec.includes('\\') || /\.[cm]?[jt]s$/.test(spec);
}

/** The module file of an agent named `spec`, or the file `spec` itself when it is a path. */
export function agentModulePath(spec: string, origin: AgentOrigin = 'asked'): string {
  if (isAgentPath(spec)) {
    const path = isAbsolute(spec) ? spec : resolve(spec);
    if (!existsSync(path)) throw new AgentNotFoundError(`agent: no file ${path}`);
    // A directory is no module (esbuild would say "Could not resolve" of it): the file in it is wanted.
    if (statSync(path).isDirectory()) throw new AgentNotFoundError(`agent: ${path} is a directory; pass the path of the agent's module in it (e.g. ${join(spec, 'agent.ts')})`);
    return path;
  }
  for (const root of searchRoots(origin)) {
    const path = resolve(root, 'agents', spec, 'agent.ts');
    if (existsSync(path)) return path;
  }
  throw new AgentNotFoundError(`agent: no agent named ${JSON.stringify(spec)} (looked for agents/${spec}/agent.ts here and in savepoint's examples; or pass the path of its module)`);
}

/**
 * The agent's dev module, by convention its sibling `<name>.dev.<ext>` (`agent.ts` →
 * `agent.dev.ts`): the simulated world and scripted model of local runs (`withDev`), kept out of
 * the agent's module so that no Lambda bundle carries them. The path itself when it names one.
 */
export function devModulePath(module: string): string | undefined {
  if (DEV_MODULE.test(module)) return module;
  const match = /^(.*)\.([cm]?[jt]s)$/.exec(module);
  if (!match) return undefined;
  const [, base, ext] = match;
  return [ext, 'ts', 'js'].map((candidate) => `${base}.dev.${candidate}`).find((path) => existsSync(path));
}

export class AgentNotFoundError extends Error {
  override readonly name = 'Agent.InvalidInput';
}

/**
 * Refuses, before anything starts, an agent the local engine cannot run: its run's model (`model`,
 * else the agent's) is the simulated one (`sim:`), which answers from the agent's scripted model
 * (`dev.policy`), and it has none — no dev module beside it (`my-agent.dev.ts` for `my-agent.ts`)
 * — and no model server is given. A provider's model (`openai:…`, a key or a local wire server in
 * its environment) needs no scripted model.
 */
export function assertRunsLocally(agent: AgentDefinition, options: { modelUrl?: string; model?: string } = {}): void {
  if (agent.dev?.policy || options.modelUrl || !(options.model ?? agent.model).startsWith('sim:')) return;
  throw new AgentNotFoundError(
    `agent ${agent.name} has no scripted model (dev.policy) to run locally: give it a dev module beside its module (<module>.dev.ts: export default withDev(agent, { policy }); see docs/writing-an-agent.md)`,
  );
}

/**
 * Loads an agent for a local run: its dev module when it has one (the agent with its simulated
 * world and scripted model), else the agent's module itself. Each module's default export, or its
 * only export that is an agent definition. The modules are the user's code: what they export is
 * checked, not trusted. `module` is the agent's module (what a deployment bundles).
 */
export async function loadAgent(spec: string, origin: AgentOrigin = 'asked'): Promise<{ agent: AgentDefinition; module: string; devModule?: string }> {
  const path = agentModulePath(spec, origin);
  const devModule = devModulePath(path);
  const module = devModule === path ? path.replace(/\.dev(\.[cm]?[jt]s)$/, '$1') : path;
  const agent = await agentExportOf(devModule ?? module);
  if (devModule && !agent.dev) throw new AgentNotFoundError(`agent: ${devModule} exports an agent without its dev parts (export default withDev(agent, { world, policy }))`);
  return { agent, module, ...(devModule && { devModule }) };
}

async function agentExportOf(module: string): Promise<AgentDefinition> {
  const exports = (await (bundle()?.importAgent(module) ?? import(pathToFileURL(module).href)).catch((error: unknown) => {
    throw agentLoadError(module, error, SAVEPOINT_CODE) ?? error;
  })) as Record<string, unknown>;
  const candidates = [exports['default'], ...Object.values(exports)].filter(isAgentDefinition);
  const agent = candidates[0];
  if (!agent) throw new AgentNotFoundError(`agent: ${module} exports no agent (export default defineAgent({ … }))`);
  return agent;
}

/**
 * The CLI bundle this process runs from, if it does (bin/savepoint.js sets it): an agent is then
 * bundled against it, so that it shares the harness's modules instead of loading their sources.
 */
function bundle(): { importAgent(modulePath: string): Promise<unknown> } | undefined {
  return (globalThis as Record<symbol, { importAgent(modulePath: string): Promise<unknown> } | undefined>)[Symbol.for('savepoint.bundle')];
}

/** The agents found by name (`agents/<name>/agent.ts` under each search root), for the message that asks for one. */
export function knownAgents(): string[] {
  const names = searchRoots('asked').flatMap((root) => {
    const dir = resolve(root, 'agents');
    return existsSync(dir) ? readdirSync(dir).filter((name) => existsSync(resolve(dir, name, 'agent.ts'))) : [];
  });
  return [...new Set(names)].sort();
}
