// With no keys configured, target "all" creates one admin key (all scopes,
// all tenants) so a first start works out of the box. Only its digest is
// stored in the data directory; the key itself is shown once, when created.
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sha256 } from './api-keys.ts';
import type { Principal } from './api-keys.ts';

export const adminKeyFile = 'admin-key.json';

export const generatedAdminPrincipal: Principal = {
  name: 'generated admin key',
  scopes: new Set(['ingest', 'read', 'admin']),
  tenants: '*',
};

export type AdminKey =
  | { readonly created: true; readonly key: string; readonly digest: Buffer; readonly path: string }
  | { readonly created: false; readonly digest: Buffer; readonly path: string };

/** Reads the stored admin key digest, or creates a new key and stores its digest (mode 0600). */
export async function ensureAdminKey(dataDir: string): Promise<AdminKey> {
  const path = join(dataDir, adminKeyFile);
  let text: string | undefined;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ENOENT') throw error;
  }
  if (text !== undefined) {
    const stored = JSON.parse(text) as { sha256?: unknown };
    if (typeof stored.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(stored.sha256)) {
      throw new Error(`${path} is damaged: delete it to generate a new admin key`);
    }
    return { created: false, digest: Buffer.from(stored.sha256, 'hex'), path };
  }
  const key = `tnt_${randomBytes(32).toString('base64url')}`;
  const digest = sha256(key);
  await mkdir(dataDir, { recursive: true });
  // 'wx' fails if another process created the file in between: never overwrite a key.
  await writeFile(path, JSON.stringify({ sha256: digest.toString('hex'), createdAt: new Date().toISOString() }) + '\n', { mode: 0o600, flag: 'wx' });
  return { created: true, key, digest, path };
}
