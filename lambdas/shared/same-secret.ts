import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether `offered` is `expected`, compared in constant time: the one comparison of a secret (a
 * loopback credential, the console's token, a link's signature, a seal). Both sides are hashed
 * first, so the comparison takes the same time whatever the offered value's length too, and
 * `timingSafeEqual` (which throws on buffers of different lengths) always gets two of 32 bytes.
 * @example sameSecret(request.headers['x-token'] ?? '', token)
 */
export function sameSecret(offered: string | Buffer, expected: string | Buffer): boolean {
  return sameSecretAs(expected)(offered);
}

/** `sameSecret` against one secret, whose digest is taken once: for a check made on every request. */
export function sameSecretAs(expected: string | Buffer): (offered: string | Buffer) => boolean {
  const wanted = digest(expected);
  return (offered) => timingSafeEqual(digest(offered), wanted);
}

function digest(value: string | Buffer): Buffer {
  return createHash('sha256').update(value).digest();
}
