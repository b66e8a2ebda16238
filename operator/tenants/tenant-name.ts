// Object names for mirrored tenants. Tenant ids allow upper case and
// characters like ~!*'() that object names (DNS-1123 subdomains) do not, so
// the name is "<stack>-<id lowered, other characters as ->" and, whenever
// that mapping lost information, a hash of the exact id is appended: "Acme"
// and "acme" never share a name. A name already held by a Tenant of another
// id gets the hash too, then a counter.
import { createHash } from 'node:crypto';

const maxNameLength = 253;

function shortHash(id: string): string {
  return createHash('sha256').update(id).digest('hex').slice(0, 8);
}

/**
 * The readable part: lower case, runs of characters outside [a-z0-9-] as one
 * '-', dots kept between DNS labels, each label trimmed to alphanumerics.
 */
export function sanitiseTenantId(id: string): string {
  return id
    .toLowerCase()
    .split('.')
    .map((label) => label.replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, ''))
    .filter((label) => label !== '')
    .join('.');
}

/** The preferred object name of a tenant of a stack, before collisions. */
export function preferredTenantName(stack: string, id: string): string {
  const readable = sanitiseTenantId(id);
  const lossless = readable === id && readable !== '';
  const base = readable === '' ? stack : `${stack}-${readable}`;
  const name = lossless ? base : `${base}-${shortHash(id)}`;
  return name.length <= maxNameLength ? name : `${name.slice(0, maxNameLength - 9)}-${shortHash(id)}`;
}

/**
 * A free object name for a tenant id. `holder(name)` returns the tenant id of
 * the Tenant holding that name, or undefined when the name is free.
 */
export function tenantObjectName(stack: string, id: string, holder: (name: string) => string | undefined): string {
  const preferred = preferredTenantName(stack, id);
  const free = (name: string): boolean => {
    const h = holder(name);
    return h === undefined || h === id;
  };
  if (free(preferred)) return preferred;
  const hashed = preferred.endsWith(shortHash(id)) ? preferred : `${preferred.slice(0, maxNameLength - 9)}-${shortHash(id)}`;
  if (free(hashed)) return hashed;
  for (let i = 2; ; i++) {
    const suffix = `-${i}`;
    const candidate = `${hashed.slice(0, maxNameLength - suffix.length)}${suffix}`;
    if (free(candidate)) return candidate;
  }
}
