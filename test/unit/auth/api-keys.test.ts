import { timingSafeEqual } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import fc from 'fast-check';
import { canAccessTenant, hasScope, loadKeys, parseKeys, presentedKey, sha256 } from '../../../src/auth/api-keys.ts';
import type { KeyRing } from '../../../src/auth/api-keys.ts';

const ingestKey = 'ingest-key-0123456789';
const readKey = 'read-key-for-acme-0123';
const adminKey = 'admin-key-0123456789ab';

function ring(text: string, equal?: (a: Buffer, b: Buffer) => boolean): KeyRing {
  const result = parseKeys(text, 'test', equal);
  if (!result.ok) throw new Error(result.error);
  return result.value;
}

function failure(text: string): string {
  const result = parseKeys(text, 'test');
  if (result.ok) throw new Error(`expected ${text} to be rejected`);
  return result.error;
}

const keysJson = JSON.stringify([
  { key: ingestKey, scopes: ['ingest'], tenants: ['*'], name: 'collector' },
  { sha256: sha256(readKey).toString('hex').toUpperCase(), scopes: ['read'], tenants: ['acme', 'globex'] },
  { key: adminKey, scopes: ['ingest', 'read', 'admin'], tenants: ['*'] },
]);

describe('API keys', () => {
  it('authenticates each key by its text or its SHA-256 and returns its principal', () => {
    const keys = ring(keysJson);
    const collector = keys.authenticate(ingestKey);
    expect(collector?.name).to.equal('collector');
    expect(collector !== undefined && hasScope(collector, 'ingest')).to.equal(true);
    expect(collector !== undefined && hasScope(collector, 'read')).to.equal(false);
    const reader = keys.authenticate(readKey);
    expect(reader?.name).to.equal('key #2');
    expect(reader !== undefined && hasScope(reader, 'read')).to.equal(true);
    expect(reader !== undefined && hasScope(reader, 'admin')).to.equal(false);
    const admin = keys.authenticate(adminKey);
    expect(admin !== undefined && hasScope(admin, 'admin')).to.equal(true);
  });

  it('limits a key to its tenants; "*" means every tenant', () => {
    const keys = ring(keysJson);
    const reader = keys.authenticate(readKey);
    if (reader === undefined) throw new Error('read key not found');
    expect(canAccessTenant(reader, 'acme')).to.equal(true);
    expect(canAccessTenant(reader, 'globex')).to.equal(true);
    expect(canAccessTenant(reader, 'initech')).to.equal(false);
    expect(canAccessTenant(reader, 'ACME')).to.equal(false);
    const admin = keys.authenticate(adminKey);
    if (admin === undefined) throw new Error('admin key not found');
    expect(canAccessTenant(admin, 'anything-at-all')).to.equal(true);
  });

  it('rejects wrong, empty, missing and near-miss keys', () => {
    const keys = ring(keysJson);
    for (const wrong of [undefined, '', 'nope', ingestKey.slice(0, -1), `${ingestKey} `, ingestKey.toUpperCase(), sha256(readKey).toString('hex')]) {
      expect(keys.authenticate(wrong), String(wrong)).to.equal(undefined);
    }
  });

  it('compares the presented digest with every key, matching or not (no early exit)', () => {
    for (const [presented, position] of [
      [ingestKey, 'first'],
      [adminKey, 'last'],
      ['no-such-key-at-all', 'none'],
    ] as const) {
      let comparisons = 0;
      const keys = ring(keysJson, (a, b) => {
        comparisons++;
        return timingSafeEqual(a, b);
      });
      keys.authenticate(presented);
      expect(comparisons, `match: ${position}`).to.equal(3);
    }
  });

  it('finds any key among many, and no other (property)', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.string({ minLength: 16, maxLength: 40 }), { minLength: 1, maxLength: 8 }), fc.nat(), (texts, pick) => {
        const keys = ring(JSON.stringify(texts.map((key, i) => ({ key, scopes: ['read'], tenants: [`t${i}`], name: `k${i}` }))));
        const index = pick % texts.length;
        expect(keys.authenticate(texts[index])?.name).to.equal(`k${index}`);
        expect(keys.authenticate(`${texts[index] ?? ''}x`)).to.equal(undefined);
      }),
    );
  });

  it('reads YAML as well as JSON', () => {
    const keys = ring(`- key: ${adminKey}\n  scopes: [admin]\n  tenants: ["*"]\n  name: ops\n`);
    expect(keys.authenticate(adminKey)?.name).to.equal('ops');
  });

  it('explains every malformed entry', () => {
    expect(failure('{not json')).to.contain('not valid JSON or YAML');
    expect(failure('{"key":"x"}')).to.contain('expected a list of key entries');
    expect(failure(JSON.stringify([{ key: 'short', scopes: ['read'], tenants: ['*'] }]))).to.contain('at least 16 characters');
    expect(failure(JSON.stringify([{ key: adminKey, scopes: ['write'], tenants: ['*'] }]))).to.contain('write');
    expect(failure(JSON.stringify([{ sha256: 'abc', scopes: ['read'], tenants: ['*'] }]))).to.contain('64 hex characters');
    expect(failure(JSON.stringify([{ key: adminKey, scopes: [], tenants: ['*'] }]))).to.contain('has no scopes');
    expect(failure(JSON.stringify([{ key: adminKey, scopes: ['read'], tenants: [] }]))).to.contain('lists no tenants');
    expect(failure(JSON.stringify([{ key: adminKey, scopes: ['read'], tenants: ['*', 'acme'] }]))).to.contain('mixes "*"');
    expect(
      failure(
        JSON.stringify([
          { key: adminKey, scopes: ['read'], tenants: ['*'] },
          { key: adminKey, scopes: ['admin'], tenants: ['*'] },
        ]),
      ),
    ).to.contain('repeats a key');
    expect(failure(JSON.stringify([{ key: adminKey, scopes: ['read'], tenants: ['*'], tenant: 'x' }]))).to.contain('unknown field "tenant"');
    expect(failure(JSON.stringify([{ key: adminKey, sha256: sha256(adminKey).toString('hex'), scopes: ['read'], tenants: ['*'] }]))).to.contain('give one');
  });

  it('loads from the variable, from a file, or yields an empty ring', async () => {
    const fromJson = await loadKeys({ json: keysJson, file: undefined });
    expect(fromJson.ok && fromJson.value.size).to.equal(3);
    const dir = await mkdtemp(join(tmpdir(), 'tenantry-keys-'));
    await writeFile(join(dir, 'keys.yaml'), `- sha256: ${sha256(readKey).toString('hex')}\n  scopes: [read]\n  tenants: [acme]\n`);
    const fromFile = await loadKeys({ json: undefined, file: join(dir, 'keys.yaml') });
    expect(fromFile.ok && fromFile.value.authenticate(readKey)?.name).to.equal('key #1');
    const missing = await loadKeys({ json: undefined, file: join(dir, 'absent.yaml') });
    expect(missing.ok).to.equal(false);
    expect(missing).to.have.property('error').that.contains('cannot read');
    const none = await loadKeys({ json: undefined, file: undefined });
    expect(none.ok && none.value.size).to.equal(0);
  });

  it('takes the key from Authorization: Bearer, else x-api-key', () => {
    expect(presentedKey('Bearer abc', undefined)).to.equal('abc');
    expect(presentedKey('bearer  abc ', 'other')).to.equal('abc');
    expect(presentedKey('Basic dXNlcjpwYXNz', 'xyz')).to.equal('xyz');
    expect(presentedKey(undefined, 'xyz')).to.equal('xyz');
    expect(presentedKey(undefined, undefined)).to.equal(undefined);
    expect(presentedKey('Bearer', '')).to.equal(undefined);
  });
});
