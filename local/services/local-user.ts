import { userInfo } from 'node:os';

/** This machine's user, as the local approval API records a decider. */
export function localUser(): string {
  let name = process.env['USER'];
  try {
    name = userInfo().username;
  } catch {
    // no passwd entry (a container): keep $USER
  }
  return `local:${name ?? 'unknown'}`;
}
