/**
 * Whether `offered` is `expected`, compared in constant time: the one comparison of a secret (a
 * loopback credential, the console's token, a link's signature, a seal). Both sides are hashed
 * first, so the comparison takes the same time whatever the offered value's length too, and
 * `timingSafeEqual` (which throws on buffers of different lengths) always gets two of 32 bytes.
 * @example sameSecret(request.headers['x-token'] ?? '', token)
 */
export declare function sameSecret(offered: string | Buffer, expected: string | Buffer): boolean;
