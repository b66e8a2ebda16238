// Starts the real API component in-process on 127.0.0.1:0 against a fresh
// migrated database of the embedded store, with a fixed set of keys.
import { Registry } from 'prom-client';
import { parseKeys } from '../../../../src/auth/api-keys.ts';
import type { Store } from '../../../../src/clickhouse/store.ts';
import type { RunningComponent } from '../../../../src/target/component.ts';
import { startApi } from '../../../../api/api.ts';
import { migratedStore } from '../../../support/embedded-store.ts';
import { testProcessContext } from '../../../support/process-context.ts';
import { auditedStore } from './tenant-predicate-audit.ts';
import { apiConfig } from '../../../../support/default-config.ts';

export const keys = {
  admin: 'admin-key-0123456789abcdef',
  readAcme: 'read-acme-key-0123456789',
  readGlobex: 'read-globex-key-0123456789',
  adminAcme: 'admin-acme-only-0123456789',
  ingest: 'ingest-only-key-0123456789',
} as const;

export interface KeySpec {
  readonly key: string;
  readonly scopes: readonly string[];
  readonly tenants: readonly string[];
}

const baseKeys = [
  { key: keys.admin, scopes: ['read', 'admin'], tenants: ['*'], name: 'admin' },
  { key: keys.readAcme, scopes: ['read'], tenants: ['acme'], name: 'read-acme' },
  { key: keys.readGlobex, scopes: ['read'], tenants: ['globex'], name: 'read-globex' },
  { key: keys.adminAcme, scopes: ['admin'], tenants: ['acme'], name: 'admin-acme' },
  { key: keys.ingest, scopes: ['ingest'], tenants: ['*'], name: 'ingest' },
];

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  /** The parsed JSON body (undefined when the body is not JSON). */
  readonly body: unknown;
}

export interface Harness {
  readonly store: Store;
  /** How many statements the API sent to the store (the tenant predicate audit's count). */
  readonly statementsSeen: () => number;
  readonly api: RunningComponent;
  readonly registry: Registry;
  readonly base: string;
  call(method: string, path: string, options?: { key?: string | null; body?: unknown; raw?: string; headers?: Record<string, string> }): Promise<Reply>;
  /** POST with JSON body and a key (the admin key by default). */
  post(path: string, body: unknown, key?: string): Promise<Reply>;
  close(): Promise<void>;
}

/** Starts the API; `extraKeys` adds keys (e.g. one per generated tenant). */
export async function startHarness(
  prefix: string,
  extraKeys: readonly KeySpec[] = [],
  queryTimeoutMs = 10_000,
  pageMaxBytes = 8 * 1_048_576,
): Promise<Harness> {
  const store = await migratedStore(prefix);
  const parsed = parseKeys(JSON.stringify([...baseKeys, ...extraKeys]), 'test keys');
  if (!parsed.ok) throw new Error(parsed.error);
  const registry = new Registry();
  // The API's statements are audited: each that reads tenants' rows must bind its tenant (checked at close).
  const audit = auditedStore(store);
  const proc = await testProcessContext(audit.store, { keys: parsed.value, registry });
  const api = await startApi(proc.ctx, apiConfig({ queryTimeoutMs, pageMaxBytes }));
  const base = `http://127.0.0.1:${api.ports['api'] ?? 0}`;
  const call: Harness['call'] = async (method, path, options = {}) => {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    const key = options.key === undefined ? keys.admin : options.key;
    if (key !== null) headers['authorization'] = `Bearer ${key}`;
    let payload: string | undefined = options.raw;
    if (options.body !== undefined) {
      payload = JSON.stringify(options.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(base + path, { method, headers, ...(payload === undefined ? {} : { body: payload }) });
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, headers: res.headers, text, body };
  };
  return {
    store,
    api,
    registry,
    base,
    call,
    statementsSeen: audit.seen,
    post: (path, body, key) => call('POST', path, { body, key: key ?? keys.admin }),
    close: async () => {
      await api.stop();
      proc.stop();
      await store.close();
      const offenders = audit.offenders();
      if (offenders.length > 0)
        throw new Error(`${offenders.length} statement(s) read tenants' rows without a bound tenant predicate:\n${offenders.slice(0, 5).join('\n')}`);
    },
  };
}

/** Reads a field path from a JSON reply body, for terse assertions. */
export function field(body: unknown, ...path: (string | number)[]): unknown {
  let at: unknown = body;
  for (const p of path) at = (at as Record<string | number, unknown> | undefined)?.[p];
  return at;
}
