// API keys (DESIGN.md section 4): parsed from JSON or YAML, kept only as
// SHA-256 digests, matched in constant time against every known key.
import { createHash, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';
import { parse as parseYaml } from 'yaml';
import { formatDecodeErrors } from '../codec/decode-errors.ts';
import { fail, ok } from '../result.ts';
import type { Result } from '../result.ts';

export const scopes = ['ingest', 'read', 'admin'] as const;
export type Scope = (typeof scopes)[number];

const ScopeCodec = t.keyof({ ingest: null, read: null, admin: null }, 'one of "ingest", "read", "admin"');
const Sha256Hex = new t.Type<string, string, unknown>(
  'a SHA-256 digest as 64 hex characters',
  (u): u is string => typeof u === 'string' && /^[0-9a-fA-F]{64}$/.test(u),
  (u, c) => (typeof u === 'string' && /^[0-9a-fA-F]{64}$/.test(u) ? t.success(u.toLowerCase()) : t.failure(u, c)),
  t.identity,
);
const KeyText = new t.Type<string, string, unknown>(
  'a key of at least 16 characters',
  (u): u is string => typeof u === 'string' && u.length >= 16,
  (u, c) => (typeof u === 'string' && u.length >= 16 ? t.success(u) : t.failure(u, c)),
  t.identity,
);

const common = {
  scopes: t.array(ScopeCodec, 'a list of scopes'),
  tenants: t.array(t.string, 'a list of tenant ids, or ["*"]'),
};
const KeySpec = t.union(
  [
    t.intersection([t.strict({ key: KeyText, ...common }), t.partial({ name: t.string })]),
    t.intersection([t.strict({ sha256: Sha256Hex, ...common }), t.partial({ name: t.string })]),
  ],
  'a key entry { "key" or "sha256", "scopes", "tenants", "name"? }',
);
const KeyList = t.array(KeySpec, 'a list of key entries');
const entryFields: ReadonlySet<string> = new Set(['key', 'sha256', 'scopes', 'tenants', 'name']);

/** Who a request is: what an authenticated key may do. */
export interface Principal {
  readonly name: string;
  readonly scopes: ReadonlySet<Scope>;
  /** "*" for every tenant, otherwise the tenant ids this key may touch. */
  readonly tenants: '*' | ReadonlySet<string>;
}

interface StoredKey {
  readonly digest: Buffer;
  readonly principal: Principal;
}

export function sha256(text: string): Buffer {
  return createHash('sha256').update(text, 'utf8').digest();
}

/** Compares two equal-length digests; timingSafeEqual in production, a counter in tests. */
export type DigestComparator = (a: Buffer, b: Buffer) => boolean;

/** The configured keys, held as digests. */
export class KeyRing {
  readonly #keys: readonly StoredKey[];
  readonly #equal: DigestComparator;

  constructor(keys: readonly StoredKey[], equal: DigestComparator = timingSafeEqual) {
    this.#keys = keys;
    this.#equal = equal;
  }

  get size(): number {
    return this.#keys.length;
  }

  /**
   * The principal of a presented key, or undefined. Every stored digest is
   * compared with timingSafeEqual and the loop never exits early, so the time
   * taken does not depend on which key (if any) matched.
   */
  authenticate(presented: string | undefined): Principal | undefined {
    if (presented === undefined || presented === '') return undefined;
    const digest = sha256(presented);
    let found: Principal | undefined;
    for (const key of this.#keys) {
      if (this.#equal(key.digest, digest) && found === undefined) found = key.principal;
    }
    return found;
  }

  /** A ring with one more key, given by digest. */
  withKey(digest: Buffer, principal: Principal): KeyRing {
    return new KeyRing([...this.#keys, { digest, principal }], this.#equal);
  }
}

export function hasScope(principal: Principal, scope: Scope): boolean {
  return principal.scopes.has(scope);
}

export function canAccessTenant(principal: Principal, tenantId: string): boolean {
  return principal.tenants === '*' || principal.tenants.has(tenantId);
}

/** Parses key entries from JSON or YAML text; `source` names where they came from in errors. */
export function parseKeys(text: string, source: string, equal?: DigestComparator): Result<KeyRing, string> {
  let raw: unknown;
  try {
    raw = parseYaml(text);
  } catch (error) {
    return fail(`${source}: not valid JSON or YAML: ${(error as Error).message.split('\n')[0] ?? ''}`);
  }
  const decoded = KeyList.decode(raw);
  if (isLeft(decoded)) return fail(`${source}: ${formatDecodeErrors(decoded.left).join('; ')}`);
  const keys: StoredKey[] = [];
  for (const [index, spec] of decoded.right.entries()) {
    const name = spec.name ?? `key #${index + 1}`;
    // io-ts strips unknown fields; a typo in a key file must not be silently ignored.
    const fields = Object.keys((raw as Record<string, unknown>[])[index] ?? {});
    const unknown = fields.filter((f) => !entryFields.has(f));
    if (unknown.length > 0)
      return fail(`${source}: ${name} has unknown field ${unknown.map((f) => JSON.stringify(f)).join(', ')} (allowed: ${[...entryFields].join(', ')})`);
    if (fields.includes('key') && fields.includes('sha256')) return fail(`${source}: ${name} gives both "key" and "sha256": give one`);
    if (spec.scopes.length === 0) return fail(`${source}: ${name} has no scopes`);
    if (spec.tenants.length === 0) return fail(`${source}: ${name} lists no tenants (use ["*"] for all)`);
    if (spec.tenants.includes('*') && spec.tenants.length > 1) return fail(`${source}: ${name} mixes "*" with tenant ids`);
    const digest = 'key' in spec ? sha256(spec.key) : Buffer.from(spec.sha256, 'hex');
    if (keys.some((k) => k.digest.equals(digest))) return fail(`${source}: ${name} repeats a key listed before it`);
    keys.push({ digest, principal: { name, scopes: new Set(spec.scopes), tenants: spec.tenants.includes('*') ? '*' : new Set(spec.tenants) } });
  }
  return ok(new KeyRing(keys, equal));
}

/** Loads keys from TENANTRY_API_KEYS (JSON) or TENANTRY_API_KEYS_FILE; none configured → an empty ring. */
export async function loadKeys(config: { readonly json: string | undefined; readonly file: string | undefined }): Promise<Result<KeyRing, string>> {
  if (config.json !== undefined) return parseKeys(config.json, 'TENANTRY_API_KEYS');
  if (config.file !== undefined) {
    try {
      return parseKeys(await readFile(config.file, 'utf8'), `TENANTRY_API_KEYS_FILE (${config.file})`);
    } catch (error) {
      return fail(`TENANTRY_API_KEYS_FILE: cannot read ${config.file}: ${(error as Error).message}`);
    }
  }
  return ok(new KeyRing([]));
}

/** The key a request presents: `Authorization: Bearer <key>`, else `x-api-key`. */
export function presentedKey(authorization: string | undefined, xApiKey: string | undefined): string | undefined {
  if (authorization !== undefined) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match !== null) return match[1];
  }
  return xApiKey === undefined || xApiKey === '' ? undefined : xApiKey.trim();
}
