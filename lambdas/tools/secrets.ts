import type { Clock } from '../shared/ports.js';

/**
 * Tool credentials (a webhook URL that is a secret, a provider's API key): named secrets a tool
 * reads at run time through its context, `await context.secret('NAME')`. On AWS each is a Secrets
 * Manager secret the construct's `toolSecrets` names; only CallTool's role may read it and its
 * function's environment holds its ARN, never its value (infra/durable-agent.ts). Locally the twin
 * serves the values it was given (`toolSecrets` option), authorized as CallTool's role.
 *
 * A value is kept TOOL_SECRET_TTL_MS after it was read, then read again, so a rotated secret is
 * picked up without a redeploy; a failed read is not kept (the next call tries again).
 */
export type ToolSecrets = (name: string) => Promise<string>;

/** Reads one secret by its id (an ARN on AWS), uncached. */
export type SecretRead = (secretId: string) => Promise<string>;

/** How long a read value is kept. */
export const TOOL_SECRET_TTL_MS = 5 * 60_000;

/** A tool secret's name, as the construct takes it and a tool asks for it. */
export const TOOL_SECRET_NAME = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

/**
 * The secrets `ids` names (name → secret id), read through `read` and kept for `ttlMs` on `clock`.
 * A name `ids` does not hold is refused, naming the ones it does.
 */
export function toolSecrets(ids: Readonly<Record<string, string>>, read: SecretRead, clock: Clock, ttlMs = TOOL_SECRET_TTL_MS): ToolSecrets {
  const kept = new Map<string, { value: Promise<string>; readAt: number }>();
  return (name) => {
    const id = Object.hasOwn(ids, name) ? ids[name] : undefined;
    if (id === undefined) {
      const known = Object.keys(ids);
      return Promise.reject(new Error(`tool secret ${JSON.stringify(name)} is not configured: the deployment's toolSecrets name ${known.length > 0 ? known.join(', ') : 'none'}`));
    }
    const now = clock.now().getTime();
    const entry = kept.get(name);
    if (entry !== undefined && now - entry.readAt < ttlMs) return entry.value;
    const value = read(id);
    const fresh = { value, readAt: now };
    kept.set(name, fresh);
    value.catch(() => kept.get(name) === fresh && kept.delete(name));
    return value;
  };
}

/** A tool asked for a secret where none are served (a context built without them). */
export const noToolSecrets: ToolSecrets = (name) => Promise.reject(new Error(`tool secret ${JSON.stringify(name)} is not configured: the deployment's toolSecrets name none`));

/** The variables a local run takes tool credentials from: `SAVEPOINT_TOOL_SECRET_<NAME>` (as a local run takes model keys from the environment). */
export const TOOL_SECRET_VARIABLE_PREFIX = 'SAVEPOINT_TOOL_SECRET_';

/** The tool credentials the environment gives a local run, by name (`SAVEPOINT_TOOL_SECRET_CHAT_WEBHOOK_URL` → `CHAT_WEBHOOK_URL`). */
export function toolSecretsFromEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).flatMap(([variable, value]) => {
      const name = variable.startsWith(TOOL_SECRET_VARIABLE_PREFIX) ? variable.slice(TOOL_SECRET_VARIABLE_PREFIX.length) : undefined;
      return name !== undefined && TOOL_SECRET_NAME.test(name) && value ? [[name, value]] : [];
    }),
  );
}
