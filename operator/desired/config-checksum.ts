// Checksums of configuration, put in pod-template annotations so that a
// config change (env, mounted Secret or ConfigMap content) rolls the pods.
import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so equal values always hash equally. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return value === undefined ? 'null' : JSON.stringify(value);
}

/** Hex SHA-256 of a value's canonical JSON. */
export function checksum(value: unknown): string {
  return createHash('sha256').update(canonical(value)).digest('hex');
}
