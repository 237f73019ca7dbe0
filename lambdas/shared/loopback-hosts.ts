/**
 * The Host headers a loopback server on `port` is reached by (and, as `http://<host>`, its
 * origins): 127.0.0.1, localhost and [::1] with the port — and without it on port 80, which a
 * browser leaves out of both. Anything else (a name that resolves here by DNS rebinding) is refused.
 */
export function loopbackHosts(port: number, others: readonly string[] = []): Set<string> {
  const names = ['127.0.0.1', 'localhost', '[::1]', ...others];
  return new Set(names.flatMap((name) => (port === 80 ? [`${name}:80`, name] : [`${name}:${port}`])));
}
