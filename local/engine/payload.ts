/** Reading into JSON payloads (what the service measures of them is local/aws/sfn-payload-limit.ts). */
import { isRecord } from '../../lambdas/shared/json.js';

export function containsString(value: unknown, needle: string): boolean {
  if (value === needle) return true;
  if (Array.isArray(value)) return value.some((v) => containsString(v, needle));
  if (isRecord(value)) return Object.values(value).some((v) => containsString(v, needle));
  return false;
}


