import { expect } from 'chai';
import fc from 'fast-check';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { quoted } from '../../../src/clickhouse/inline-params.ts';
import { insertRowBinary, insertRowBinaryFile } from '../../../src/clickhouse/row-binary-insert.ts';
import type { RowBinaryTarget } from '../../../src/clickhouse/row-binary-insert.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { RowWriter } from '../../../gateway/rowbinary/row-writer.ts';
import { databaseStore, rows } from '../../support/embedded-store.ts';

const target: RowBinaryTarget = {
  table: 'bin',
  columns: ['id', 's', 'tags', 'n', 'at'],
  structure: 'id UInt32, s String, tags Map(LowCardinality(String), String), n Nullable(Float64), at DateTime64(9)',
};

/** One row: strings hold bytes JSON and TSV would have to escape or could not carry. */
function row(w: RowWriter, id: number, s: Buffer, tags: Record<string, string>, n: number | null, atNs: bigint): void {
  w.u32(id);
  w.string(s, 0, s.length);
  const entries = Object.entries(tags);
  w.varint(entries.length);
  for (const [k, v] of entries) {
    w.text(k);
    w.text(v);
  }
  if (n === null) w.u8(1);
  else {
    w.u8(0);
    w.f64(n);
  }
  w.u64Parts(Number(atNs & 0xffffffffn), Number(atNs >> 32n));
}

describe('RowBinary inserts on embedded ClickHouse', function () {
  this.timeout(60_000);
  let store: Store;
  before(async () => {
    store = await databaseStore('row_binary');
    await store.client.command({ query: `CREATE DATABASE ${store.database}` });
    await store.client.command({ query: `CREATE TABLE ${store.database}.bin (${target.structure}) ENGINE = MergeTree ORDER BY id` });
  });
  after(async () => {
    await store.close();
  });

  it('stores every byte of every value, from several chunks in one INSERT, and leaves no staged file', async () => {
    const odd = Buffer.from([0x00, 0x0a, 0x09, 0x22, 0x5c, 0x27, 0xff, 0xfe, 0x2c]);
    const first = new RowWriter(16);
    row(first, 1, odd, { 'k\u0000"': "v\n'", é: '日本' }, 1.5, 1_763_800_000_123_456_789n);
    row(first, 2, Buffer.alloc(0), {}, null, 0n);
    const second = new RowWriter(16);
    row(
      second,
      3,
      Buffer.alloc(300, 0x61),
      Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`k${i}`, `v${i}`])),
      Number.NaN,
      9_223_372_036_854_775_807n,
    );
    await insertRowBinary(store, target, [first.result(), second.result()]);
    const rs = await store.client.query({
      query: `SELECT id, hex(s) AS s, tags, n, toString(toUnixTimestamp64Nano(at)) AS ns, isNaN(n) AS nan FROM ${store.database}.bin ORDER BY id`,
      format: 'JSONEachRow',
    });
    const got = await rs.json<{ id: number; s: string; tags: Record<string, string>; n: number | null; ns: string; nan: number }>();
    expect(got.map((r) => r.id)).to.deep.equal([1, 2, 3]);
    expect(got[0]?.s).to.equal(odd.toString('hex').toUpperCase());
    expect(got[0]?.tags).to.deep.equal({ 'k\u0000"': "v\n'", é: '日本' });
    expect([got[0]?.n, got[0]?.ns]).to.deep.equal([1.5, '1763800000123456789']);
    expect([got[1]?.s, got[1]?.tags, got[1]?.n]).to.deep.equal(['', {}, null]);
    expect(Object.keys(got[2]?.tags ?? {})).to.have.length(200);
    expect([got[2]?.nan, got[2]?.ns]).to.deep.equal([1, '9223372036854775807']);
    expect(readdirSync(store.spoolDir ?? '')).to.deep.equal([]);
  });

  it("inserts a file of RowBinary rows in place (a write-ahead-log segment's rows file), under a path that needs quoting, and leaves the file as it was", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tenantry it's a dir\\ "));
    try {
      const w = new RowWriter(16);
      row(w, 40, Buffer.from('in place'), { k: 'v' }, 4, 4n);
      row(w, 41, Buffer.from([0x00, 0xff]), {}, null, 5n);
      const path = join(dir, 'segment.rows');
      writeFileSync(path, w.result());
      const before = readFileSync(path);
      await insertRowBinaryFile(store, target, path, 'file-token-1');
      const got = await rows<{ id: number; s: string; tags: Record<string, string> }>(
        store,
        `SELECT id, hex(s) AS s, tags FROM ${store.database}.bin WHERE id IN (40, 41) ORDER BY id`,
      );
      expect(got).to.deep.equal([
        { id: 40, s: Buffer.from('in place').toString('hex').toUpperCase(), tags: { k: 'v' } },
        { id: 41, s: '00FF', tags: {} },
      ]);
      expect(readFileSync(path).equals(before)).to.equal(true);
      expect(readdirSync(store.spoolDir ?? '')).to.deep.equal([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("leaves a block's skip indexes to the first merge that takes its part in, and queries find its rows meanwhile", async () => {
    await store.client.command({
      query: `CREATE TABLE ${store.database}.indexed (${target.structure}, INDEX idx_s s TYPE bloom_filter(0.01) GRANULARITY 1) ENGINE = MergeTree ORDER BY id`,
    });
    const indexBytes = async (): Promise<number[]> =>
      (
        await rows<{ b: string }>(
          store,
          "SELECT toUInt64(secondary_indices_compressed_bytes) AS b FROM system.parts WHERE database = {db:String} AND table = 'indexed' AND active ORDER BY name",
          { db: store.database },
        )
      ).map((r) => Number(r.b));
    for (const id of [1, 2]) {
      const w = new RowWriter(16);
      row(w, id, Buffer.from(`needle-${id}`), {}, null, 1n);
      await insertRowBinary(store, { ...target, table: 'indexed' }, [w.result()]);
    }
    expect(await indexBytes()).to.deep.equal([0, 0]);
    const found = (): Promise<unknown[]> => rows(store, `SELECT id FROM ${store.database}.indexed WHERE s = 'needle-2'`);
    expect(await found()).to.deep.equal([{ id: 2 }]);
    await store.client.command({ query: `OPTIMIZE TABLE ${store.database}.indexed FINAL` });
    const merged = await indexBytes();
    expect(merged).to.have.length(1);
    expect(merged[0]).to.be.greaterThan(0);
    expect(await found()).to.deep.equal([{ id: 2 }]);
  });

  it('rejects rows that do not match the structure, stores none of them, and leaves no staged file', async () => {
    const before = await store.client
      .query({ query: `SELECT count() AS n FROM ${store.database}.bin`, format: 'JSONEachRow' })
      .then((r) => r.json<{ n: number }>());
    const good = new RowWriter(16);
    row(good, 10, Buffer.from('ok'), {}, 1, 1n);
    const truncated = Buffer.concat([good.result(), Buffer.from([0x0b, 0x00])]);
    let error: unknown;
    try {
      await insertRowBinary(store, target, [truncated]);
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(Error);
    const after = await store.client
      .query({ query: `SELECT count() AS n FROM ${store.database}.bin`, format: 'JSONEachRow' })
      .then((r) => r.json<{ n: number }>());
    expect(after).to.deep.equal(before);
    expect(readdirSync(store.spoolDir ?? '')).to.deep.equal([]);
  });

  it("runs on its own connection: an INSERT finishes while a query holds the queries' connection", async () => {
    const query = store.client.query({ query: 'SELECT sleep(3) AS slept', format: 'JSONEachRow' }).then(async (rs) => rs.json());
    const w = new RowWriter(16);
    row(w, 30, Buffer.from('beside'), {}, 3, 3n);
    const first = await Promise.race([insertRowBinary(store, target, [w.result()]).then(() => 'insert'), query.then(() => 'query')]);
    expect(first).to.equal('insert');
    await query;
  });

  it('writes any string as a literal ClickHouse reads back unchanged', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ unit: 'binary', maxLength: 40 }), async (value) => {
        const rs = await store.insertClients[0].query({ query: `SELECT ${quoted(value)} AS v`, format: 'JSONEachRow' });
        expect((await rs.json<{ v: string }>())[0]?.v).to.equal(value);
      }),
      { numRuns: 200, seed: 19 },
    );
  });

  it('recreates the spool folder when something removed it', async () => {
    rmSync(store.spoolDir ?? '', { recursive: true, force: true });
    const w = new RowWriter(16);
    row(w, 20, Buffer.from('again'), {}, 2, 2n);
    await insertRowBinary(store, target, [w.result()]);
    const got = await store.client
      .query({ query: `SELECT s FROM ${store.database}.bin WHERE id = 20`, format: 'JSONEachRow' })
      .then((r) => r.json<{ s: string }>());
    expect(got).to.deep.equal([{ s: 'again' }]);
    expect(readdirSync(store.spoolDir ?? '')).to.deep.equal([]);
  });
});
