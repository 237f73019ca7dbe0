/** Reading into JSON payloads (what the service measures of them is local/aws/sfn-payload-limit.ts). */

export function containsString(value: unknown, needle: string): boolean {
  if (value === needle) return true;
  if (Array.isArray(value)) return value.some((v) => containsString(v, needle));
  if (isRecord(value)) return Object.values(value).some((v) => containsString(v, needle));
  return false;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

