// The embedded store's connections (src/clickhouse/chdb-pool.ts): parameters
// inlined as typed literals give exactly what ClickHouse's own binder gives,
// hostile strings included; two statements run at once (a trivial one is
// not held behind a long one, which chDB's binder would do with bound
// parameters); and every statement that may write moves the write epoch.
import { expect } from 'chai';
import { inlineParams, quoted, sqlLiteral } from '../../../src/clickhouse/inline-params.ts';
import { readOnly, writtenTable } from '../../../src/clickhouse/write-epoch.ts';
import type { Store } from '../../../src/clickhouse/store.ts';
import { databaseStore } from '../../support/embedded-store.ts';

/** Strings a client could send that a careless literal would let out of its quotes, or change. */
const hostile = [
  '',
  "'",
  "\\'",
  "a' OR 1=1 --",
  "\\' OR 1=1 --",
  'back\\slash\\',
  '\\x27',
  "{p1:String}') UNION ALL SELECT name FROM system.tables --",
  'tab\tnew\nline\rcr\u0000nul\u0001\u001f\u007fdel',
  'ünïcødé ✓ 𝔘 日本',
  '\\N',
  "''''",
  '$$ ; DROP TABLE x; --',
];

/** A random string of ASCII, control characters and code points up to the astral planes. */
function randomString(rand: () => number): string {
  const n = Math.floor(rand() * 24);
  let s = '';
  for (let i = 0; i < n; i++) {
    const r = rand();
    if (r < 0.3) s += String.fromCharCode(Math.floor(rand() * 0x80));
    else if (r < 0.5) s += ["'", '\\', '{', '}', ':', '"', '`'][Math.floor(rand() * 7)] ?? '';
    else if (r < 0.9) s += String.fromCharCode(0x20 + Math.floor(rand() * 0x5f));
    else s += String.fromCodePoint(0x80 + Math.floor(rand() * 0x1f000));
  }
  return s;
}

function seeded(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

describe('embedded connections: parameters inlined, statements at once', () => {
  let store: Store;

  before(async () => {
    store = await databaseStore('embedded_connections');
    await store.client.command({ query: `CREATE DATABASE ${store.database}` });
  });

  after(async () => {
    await store.close();
  });

  it('renders each value by its JavaScript type alone', () => {
    expect(sqlLiteral("it's")).to.equal("'it\\'s'");
    expect(sqlLiteral('a\\b\n')).to.equal("'a\\\\b\\x0a'");
    expect(sqlLiteral(-12.5)).to.equal('-12.5');
    expect(sqlLiteral(12n)).to.equal('12');
    expect(sqlLiteral(Number.NaN)).to.equal('nan');
    expect(sqlLiteral(Number.NEGATIVE_INFINITY)).to.equal('-inf');
    expect(sqlLiteral(['a', null])).to.equal("['a', NULL]");
    expect(() => sqlLiteral({ a: 1 })).to.throw(/bug/);
    expect(quoted("DateTime64(3, 'UTC')")).to.equal("'DateTime64(3, \\'UTC\\')'");
    // One pass: a value that looks like a placeholder is not replaced again.
    expect(inlineParams('SELECT {a:String}, {b:String}, {c:UInt8}', { a: '{b:String}', b: 'x' })).to.equal("SELECT '{b:String}', 'x', {c:UInt8}");
  });

  it('hands the engine every value exactly as sent, hostile strings included', async () => {
    const rand = seeded(33);
    const strings = [...hostile, ...Array.from({ length: 200 }, () => randomString(rand))];
    const sql = 'SELECT {s:String} AS s, length({s:String}) AS n, {arr:Array(String)} AS arr, {i:Int64} AS i, {u:UInt64} AS u, {f:Float64} AS f';
    for (const [k, s] of strings.entries()) {
      const params = { s, arr: [s, 'x', s], i: 3 - k, u: k, f: k / 7 };
      const rs = await store.client.query({ query: sql, query_params: params, format: 'JSONEachRow' });
      const [row] = await rs.json<{ s: string; n: number; arr: string[]; i: string; u: string; f: number }>();
      expect(row?.s, JSON.stringify(s)).to.equal(s);
      expect(row?.n, JSON.stringify(s)).to.equal(Buffer.byteLength(s));
      expect(row?.arr).to.deep.equal([s, 'x', s]);
      expect([Number(row?.i), Number(row?.u), row?.f]).to.deep.equal([3 - k, k, k / 7]);
    }
  });

  it('types a value as the placeholder says, as the binder does (key analysis sees the same constant)', async () => {
    const rs = await store.client.query({
      query: 'SELECT toTypeName({a:UInt64}) AS a, toTypeName({b:Array(String)}) AS b, toTypeName({c:Date}) AS c, {c:Date} AS d',
      query_params: { a: 1, b: [], c: '2026-11-29' },
      format: 'JSONEachRow',
    });
    expect(await rs.json()).to.deep.equal([{ a: 'UInt64', b: 'Array(String)', c: 'Date', d: '2026-11-29' }]);
  });

  it('runs a trivial statement beside two long ones (both query slots held): it is not held behind either', async () => {
    // Bound parameters on all, as every API statement has: chDB's native binder would run them one after the other.
    const longSql = `SELECT number % 100000 AS k, quantile(0.99)(number) FROM numbers({n:UInt64}) WHERE {tag:String} != '' GROUP BY k FORMAT Null SETTINGS max_threads = 1`;
    let longEnded = 0;
    const longs = ['first long', 'second long'].map((tag) =>
      store.client.command({ query: longSql, query_params: { n: 60_000_000, tag } }).then(() => {
        longEnded += 1;
      }),
    );
    // Wait (bounded) until both long statements show in system.processes.
    const deadline = Date.now() + 10_000;
    for (;;) {
      const rs = await store.insertClients[0].query({
        query: "SELECT count() AS n FROM system.processes WHERE query LIKE '%quantile(0.99)(number)%' AND query_id != queryID()",
        format: 'JSONEachRow',
      });
      const [row] = await rs.json<{ n: string }>();
      if (Number(row?.n) >= 2) break;
      if (Date.now() > deadline) throw new Error('the long statements never both showed in system.processes');
      // The store reports no event when a statement starts: poll, bounded by the deadline.
      await new Promise((r) => setTimeout(r, 10));
    }
    const rs = await store.client.query({ query: 'SELECT {x:UInt64} + 1 AS y', query_params: { x: 41 }, format: 'JSONEachRow' });
    const [answer] = await rs.json<{ y: number | string }>();
    expect(Number(answer?.y)).to.equal(42);
    expect(longEnded, 'the trivial statement answered while both long ones still ran').to.equal(0);
    await Promise.all(longs);
  });

  it('moves the write epoch for a statement that may write, never for one that only reads', async () => {
    const writes = store.writes;
    if (writes === undefined) throw new Error('an embedded store counts its writes');
    await store.client.command({ query: `CREATE TABLE IF NOT EXISTS ${store.database}.w (x UInt8) ENGINE = MergeTree ORDER BY x` });
    const before = writes.quiet();
    await store.client.query({ query: `SELECT count() FROM ${store.database}.w`, format: 'JSONEachRow' });
    expect(writes.quiet(), 'a read leaves it').to.equal(before);
    await store.client.command({ query: `INSERT INTO ${store.database}.w VALUES ({x:UInt8})`, query_params: { x: 1 } });
    expect(writes.quiet(), 'an INSERT moves it').to.not.equal(before);
    const after = writes.quiet();
    await store.insertClients[0].insert({ table: `${store.database}.w`, values: [{ x: 2 }], format: 'JSONEachRow' });
    expect(writes.quiet(), 'an INSERT on an insert connection moves it too').to.not.equal(after);
    expect([
      readOnly('  select 1'),
      readOnly('WITH x AS (SELECT 1) SELECT * FROM x'),
      readOnly('KILL QUERY WHERE 1'),
      readOnly('ALTER TABLE t DELETE WHERE 1'),
    ]).to.deep.equal([true, true, true, false]);

    // Per table: a write to another table leaves a table's epoch where it was; one to the table (or to no table named) moves it.
    const w = `${store.database}.w`;
    await store.client.command({ query: `CREATE TABLE IF NOT EXISTS ${store.database}.other (x UInt8) ENGINE = MergeTree ORDER BY x` });
    const own = writes.quiet(w);
    await store.client.command({ query: `INSERT INTO ${store.database}.other VALUES ({x:UInt8})`, query_params: { x: 1 } });
    expect(writes.quiet(w), "another table's INSERT").to.equal(own);
    await store.client.command({ query: `ALTER TABLE ${store.database}.w DELETE WHERE x = 1 SETTINGS mutations_sync = 2` });
    expect(writes.quiet(w), "the table's own ALTER").to.not.equal(own);
    const altered = writes.quiet(w);
    await store.client.command({ query: `OPTIMIZE TABLE ${store.database}.other FINAL` });
    expect(writes.quiet(w), 'a statement naming no written table counts against every table').to.not.equal(altered);
    expect([
      writtenTable('INSERT INTO db.metrics (a, b) SELECT 1'),
      writtenTable('insert into `db`.`logs` FORMAT JSONEachRow'),
      writtenTable('ALTER TABLE db.metrics DELETE WHERE 1'),
      writtenTable('INSERT INTO metrics VALUES (1)'),
      writtenTable('CREATE TABLE db.x (a UInt8) ENGINE = Memory'),
    ]).to.deep.equal(['db.metrics', 'db.logs', 'db.metrics', undefined, undefined]);
  });
});
