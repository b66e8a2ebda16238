// The Secret the operator generates for a stack: the admin API key (plaintext
// for the operator, SHA-256 only in the key file the pods read) and, for a
// managed ClickHouse, the credentials inside it (docs/operator.md, "Day two"):
// the application user's password (gateway and API), the DDL user's (the
// migrate Job), the interserver HTTP password (replica fetches), the cluster
// secret (Distributed queries between servers) and the Keeper digest
// password. Values are inputs: the reconciler keeps the ones already stored
// and draws new ones only where none is stored.
import { createHash } from 'node:crypto';
import type { Secret } from './manifest-types.ts';
import type { Stack } from '../stack/stack-spec.ts';
import { childNames } from './child-names.ts';
import { childMeta } from './object-meta.ts';

export interface GeneratedCredentials {
  readonly adminKey: string;
  /** The application user's password (the gateway and the API). */
  readonly clickhousePassword: string;
  /** The DDL user's password (the migrate Job). */
  readonly clickhouseDdlPassword: string;
  readonly interserverPassword: string;
  readonly clusterSecret: string;
  readonly keeperPassword: string;
}

export const secretKeys = {
  adminKey: 'admin-key',
  keysFile: 'api-keys.json',
  clickhousePassword: 'clickhouse-password',
  clickhouseDdlPassword: 'clickhouse-ddl-password',
  interserverPassword: 'clickhouse-interserver-password',
  clusterSecret: 'clickhouse-cluster-secret',
  keeperPassword: 'clickhouse-keeper-password',
} as const;

/** The generated ClickHouse credentials: every key of the Secret but the API key's two. */
export const clickhouseSecretKeys = ['clickhousePassword', 'clickhouseDdlPassword', 'interserverPassword', 'clusterSecret', 'keeperPassword'] as const;

/** Users of a managed ClickHouse: least privilege for the applications, DDL for the migrate Job (managed-clickhouse.ts grants). */
export const clickhouseUsers = { app: 'tenantry', ddl: 'tenantry_ddl', interserver: 'interserver', keeper: 'tenantry' } as const;

/** Whether the stack needs a generated Secret (no key Secret named, or a managed ClickHouse). */
export function needsCredentialsSecret(stack: Stack): boolean {
  return stack.spec.apiKeys.secretName === undefined || stack.spec.clickhouse.mode === 'managed';
}

/** The key file (TENANTRY_API_KEYS_FILE format) holding only the digest of the admin key. */
export function generatedKeysFile(adminKey: string): string {
  const sha256 = createHash('sha256').update(adminKey).digest('hex');
  return JSON.stringify([{ sha256, scopes: ['ingest', 'read', 'admin'], tenants: ['*'], name: 'operator-generated-admin' }]);
}

export function credentialsSecret(stack: Stack, credentials: GeneratedCredentials): Secret {
  const data: Record<string, string> = {};
  if (stack.spec.apiKeys.secretName === undefined) {
    data[secretKeys.adminKey] = credentials.adminKey;
    data[secretKeys.keysFile] = generatedKeysFile(credentials.adminKey);
  }
  if (stack.spec.clickhouse.mode === 'managed') for (const key of clickhouseSecretKeys) data[secretKeys[key]] = credentials[key];
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: childMeta(stack.ref, childNames(stack.ref.name).credentials, 'credentials'),
    type: 'Opaque',
    // `data`, not `stringData`: server-side apply tracks ownership of data keys, so a key no longer desired is removed.
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')])),
  };
}

/** Where the operator finds the plaintext admin key of a stack: Secret name and key. */
export function adminKeyLocation(stack: Stack): { readonly secretName: string; readonly key: string } {
  const keys = stack.spec.apiKeys;
  return keys.secretName === undefined
    ? { secretName: childNames(stack.ref.name).credentials, key: secretKeys.adminKey }
    : { secretName: keys.secretName, key: keys.adminKeyKey };
}
