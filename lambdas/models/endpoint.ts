import { InvalidInputError } from '../shared/errors.js';

/**
 * `url` if it may carry a key or a conversation: `https://`, or `http://` on loopback only (the
 * local wire servers). `setting` names where the value came from, for the message.
 */
export function checkEndpoint(url: string, setting: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInputError(`${setting}=${url} is not a URL`);
  }
  if (parsed.protocol === 'https:') return url;
  if (parsed.protocol === 'http:' && isLoopback(parsed.hostname)) return url;
  if (parsed.protocol === 'http:') {
    throw new InvalidInputError(`${setting}=${url} is refused: http:// is allowed only on loopback (127.0.0.1, ::1, localhost) — use https://`);
  }
  throw new InvalidInputError(`${setting}=${url} is refused: the scheme must be https:// (or http:// on loopback)`);
}

function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || host === '::1' || /^127(\.\d{1,3}){3}$/.test(host);
}
