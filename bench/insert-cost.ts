// npm run bench:insert-cost — where an embedded INSERT's CPU per row and the
// bytes at rest go (issue 19). The gateway's own RowBinary rows (the
// bench:peers corpus, converted by the gateway's converters) are INSERTed in
// blocks of 100k rows, exactly as the write-ahead log's inserter does
// (file() + deduplication token), into one fresh database per schema
// variant: the tables as they are, and the same tables altered (a skip index
// dropped, the materialized views dropped, other codecs, other types). Blocks
// go round-robin over the variants, so load from other processes on a shared
// machine hits every variant alike; merges are stopped while inserting, then
// each table is merged into one part (OPTIMIZE FINAL) and measured.
// Not a test: it prints figures; ratios are against `current` of the same run.
//
//   npm run bench:insert-cost                  # logs and spans, 3 blocks of 100k rows per variant (~5 min)
//   npm run bench:insert-cost -- --only=logs --blocks=8 --variants='current|schema v2 (before migration 3)'
//   options: --only=logs,spans  --blocks=N  --block-rows=N  --variants=NAME|NAME (names as printed)
//
// Per variant: INSERT CPU per row (user+system time of ClickHouse's query
// threads, from system.events; chDB has no query_log), the process's CPU and
// wall time per row, the OPTIMIZE FINAL's CPU per row, bytes at rest per row
// (active parts on disk), whether the rows hold what current's hold (=), and
// the columns whose bytes changed. For `current`, bytes per column and per
// skip index, and the INSERT's ProfileEvents that say where its time goes.
// Variants marked "measure only" are not schema candidates: they split the
// cost (parse only), or change what the API would see (binary ids), or the
// corpus (unique span ids: the bench:peers corpus repeats each template's
// span ids, 8,000 in all, which real span ids never do).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Principal } from '../src/auth/api-keys.ts';
import { insertSettings, skipIndexesAtMerge } from '../src/clickhouse/row-binary-insert.ts';
import { createDatabase, createTable } from '../src/clickhouse/schema/ddl.ts';
import { migrations } from '../src/clickhouse/schema/migrations.ts';
import { migrate } from '../src/clickhouse/schema/migrator.ts';
import { logsTable, spansTable } from '../src/clickhouse/schema/tables.ts';
import { openStore } from '../src/clickhouse/store.ts';
import type { Store } from '../src/clickhouse/store.ts';
import { silentLogger } from '../src/log/logger.ts';
import { TenantResolver } from '../gateway/convert/common/tenant-resolver.ts';
import { rowConverters } from '../gateway/convert/row-converters.ts';
import { rowTargets } from '../gateway/writer/clickhouse-row-sink.ts';
import { RequestFactory, itemsPerRequest } from './peers/payloads.ts';

type Table = 'logs' | 'spans';

const retention = { logsDays: 30, tracesDays: 30, metricsDays: 90 };

const { values: args } = parseArgs({
  options: {
    only: { type: 'string', default: 'logs,spans' },
    blocks: { type: 'string', default: '3' },
    variants: { type: 'string' },
    'block-rows': { type: 'string', default: '100000' },
  },
});
const isTable = (t: string): t is Table => t === 'logs' || t === 'spans';
const tables = args.only
  .split(',')
  .map((t) => t.trim())
  .map((t) => {
    if (!isTable(t)) throw new Error(`--only=${args.only}: tables are logs, spans`);
    return t;
  });
const blocks = Number(args.blocks);
const blockRows = Number(args['block-rows']);
if (!Number.isInteger(blocks) || blocks < 1 || !Number.isInteger(blockRows) || blockRows < itemsPerRequest)
  throw new Error('--blocks and --block-rows need positive integers');

// ---------------------------------------------------------------- variants

/**
 * A schema variant: the table created with other column types before the
 * migrations run (their CREATE … IF NOT EXISTS then keeps it; sort-key columns
 * cannot change type by ALTER), statements run on the freshly migrated
 * database ({db} is its name), and the SELECT list of the INSERT if not `*`.
 */
interface Variant {
  readonly name: string;
  readonly alter: readonly string[];
  readonly columnTypes?: Readonly<Record<string, string>>;
  readonly select?: (column: string) => string;
  /** The table INSERTed into, if not the signal's own. */
  readonly into?: string;
  /** The types file() reads the rows as, if not the table's (RowBinary encodes LowCardinality(String) as String). */
  readonly structure?: (structure: string) => string;
  /** Only the migrations up to this version (the schema as it was before a later one). */
  readonly upTo?: number;
  /** The INSERT's skip-index setting instead of the gateway's (skipIndexesAtMerge); its other settings are the gateway's. */
  readonly skipIndexSetting?: string;
  /** Measured only: a change the API would see (its SQL would need to change). */
  readonly measureOnly?: boolean;
}

const withoutLowCardinality = (structure: string): string => structure.replaceAll('LowCardinality(String)', 'String');

const mapCols: Record<Table, readonly string[]> = {
  logs: ['resource_attributes', 'scope_attributes', 'log_attributes'],
  spans: ['resource_attributes', 'scope_attributes', 'span_attributes'],
};
const itemMap: Record<Table, string> = { logs: 'log_attributes', spans: 'span_attributes' };
const lcMap = 'Map(LowCardinality(String), String)';

const alterTable = (t: Table, clauses: readonly string[]): string => `ALTER TABLE {db}.${t} ${clauses.join(', ')}`;
const dropIndexes = (t: Table, names: readonly string[]): string =>
  alterTable(
    t,
    names.map((n) => `DROP INDEX ${n}`),
  );
const codec = (t: Table, columns: readonly string[], type: string, spec: string): string =>
  alterTable(
    t,
    columns.map((c) => `MODIFY COLUMN ${c} ${type} CODEC(${spec})`),
  );
const mapIndexNames = (column: string): string[] => [`idx_${column}_keys`, `idx_${column}_values`];

/** Binary ids: the hex text unhexed into FixedString (16 bytes for a trace id, 8 for a span id). */
const idTypes: Record<Table, Readonly<Record<string, number>>> = {
  logs: { trace_id: 16, span_id: 8 },
  spans: { trace_id: 16, span_id: 8, parent_span_id: 8 },
};

/** Every column of `t` stored with ZSTD(1) today, with its type: the ones a codec change touches. */
function zstdColumns(t: Table): Array<[string, string]> {
  const spec = (t === 'logs' ? logsTable : spansTable)(retention);
  return spec.columns
    .filter((c) => c.endsWith('CODEC(ZSTD(1))'))
    .map((c) => [c.slice(0, c.indexOf(' ')), c.slice(c.indexOf(' ') + 1, -' CODEC(ZSTD(1))'.length)]);
}

function variants(t: Table): Variant[] {
  const maps = mapCols[t];
  const item = itemMap[t];
  const ids = idTypes[t];
  const zstd = zstdColumns(t);
  const usageAndDiscovery = [`DROP VIEW {db}.${t}_usage_mv`, `DROP VIEW {db}.${t}_tenants_mv`];
  const dropTraceIndexView = 'DROP VIEW {db}.spans_trace_index_mv';
  const big = (spec: string): string =>
    alterTable(
      t,
      zstd.filter(([c]) => c !== 'tenant_id').map(([c, type]) => `MODIFY COLUMN ${c} ${type} CODEC(${spec})`),
    );
  const all: Variant[] = [
    { name: 'current', alter: [] },
    { name: 'schema v2 (before migration 3)', alter: [], upTo: 2 },
    { name: 'parse only (Null table)', measureOnly: true, alter: [`CREATE TABLE {db}.${t}_null AS {db}.${t} ENGINE = Null`], into: `${t}_null` },
    {
      name: 'parse only + file() without LowCardinality',
      measureOnly: true,
      alter: [`CREATE TABLE {db}.${t}_null AS {db}.${t} ENGINE = Null`],
      into: `${t}_null`,
      structure: withoutLowCardinality,
    },
    { name: 'file() without LowCardinality', measureOnly: true, alter: [], structure: withoutLowCardinality },
    { name: 'ZSTD(1) columns as LZ4', measureOnly: true, alter: [big('LZ4')] },
    { name: 'ZSTD(1) columns as NONE', measureOnly: true, alter: [big('NONE')] },
    { name: 'no idx_trace_id', alter: [dropIndexes(t, ['idx_trace_id'])] },
    { name: 'skip indexes built by the INSERT', alter: [], skipIndexSetting: 'materialize_skip_indexes_on_insert = 1' },
    { name: 'wide inserted parts (before migration 10)', alter: [`ALTER TABLE {db}.${t} MODIFY SETTING min_rows_for_wide_part = 0`] },
    { name: 'compact parts below 1M rows', alter: [`ALTER TABLE {db}.${t} MODIFY SETTING min_rows_for_wide_part = 1000000`] },
    ...(t === 'spans' ? [{ name: 'no idx_duration', alter: [dropIndexes(t, ['idx_duration'])] }] : []),
    { name: 'no resource_attributes idx', alter: [dropIndexes(t, mapIndexNames('resource_attributes'))] },
    { name: `no ${item} idx`, alter: [dropIndexes(t, mapIndexNames(item))] },
    { name: `no ${item} values idx`, alter: [dropIndexes(t, [`idx_${item}_values`])] },
    {
      name: 'no skip indexes',
      alter: [dropIndexes(t, ['idx_trace_id', ...(t === 'spans' ? ['idx_duration'] : []), ...mapIndexNames('resource_attributes'), ...mapIndexNames(item)])],
    },
    { name: 'no views', alter: usageAndDiscovery },
    { name: 'no usage view', alter: [`DROP VIEW {db}.${t}_usage_mv`] },
    ...(t === 'spans'
      ? [
          { name: 'no trace index view', alter: [dropTraceIndexView] },
          { name: 'no views at all', alter: [dropTraceIndexView, ...usageAndDiscovery] },
        ]
      : []),
    { name: 'maps without LowCardinality keys', alter: [codec(t, maps, 'Map(String, String)', 'ZSTD(1)')] },
    { name: 'maps LZ4', alter: [codec(t, maps, lcMap, 'LZ4')] },
    { name: 'maps ZSTD(1)', alter: [codec(t, maps, lcMap, 'ZSTD(1)')] },
    { name: `${item} ZSTD(3)`, alter: [codec(t, [item], lcMap, 'ZSTD(3)')] },
    { name: `${item} ZSTD(6)`, alter: [codec(t, [item], lcMap, 'ZSTD(6)')] },
    {
      name: `maps but ${item} ZSTD(3)`,
      alter: [
        codec(
          t,
          maps.filter((m) => m !== item),
          lcMap,
          'ZSTD(3)',
        ),
      ],
    },
    { name: 'maps ZSTD(2)', alter: [codec(t, maps, lcMap, 'ZSTD(2)')] },
    { name: 'maps ZSTD(3)', alter: [codec(t, maps, lcMap, 'ZSTD(3)')] },
    { name: 'maps ZSTD(4)', alter: [codec(t, maps, lcMap, 'ZSTD(4)')] },
    { name: 'maps ZSTD(5)', alter: [codec(t, maps, lcMap, 'ZSTD(5)')] },
    { name: 'maps ZSTD(6)', alter: [codec(t, maps, lcMap, 'ZSTD(6)')] },
    { name: 'maps ZSTD(9)', alter: [codec(t, maps, lcMap, 'ZSTD(9)')] },
    {
      name: 'maps ZSTD(3) + 4 MiB blocks',
      alter: [codec(t, maps, lcMap, 'ZSTD(3)'), `ALTER TABLE {db}.${t} MODIFY SETTING min_compress_block_size = 4194304, max_compress_block_size = 4194304`],
    },
    { name: 'ids ZSTD(3)', alter: [codec(t, Object.keys(ids), 'String', 'ZSTD(3)')] },
    ...(t === 'logs'
      ? [
          { name: 'body ZSTD(3)', alter: [codec(t, ['body'], 'String', 'ZSTD(3)')] },
          { name: 'log_id ZSTD(3)', alter: [codec(t, ['log_id'], 'String', 'ZSTD(3)')] },
          { name: 'timestamps DoubleDelta', alter: [codec(t, ['timestamp', 'observed_timestamp'], 'DateTime64(9)', 'DoubleDelta, ZSTD(1)')] },
        ]
      : [
          { name: 'event_timestamps Delta(8)', alter: [codec(t, ['event_timestamps'], 'Array(DateTime64(9))', 'Delta(8), ZSTD(1)')] },
          { name: 'event_timestamps ZSTD(3)', alter: [codec(t, ['event_timestamps'], 'Array(DateTime64(9))', 'ZSTD(3)')] },
          { name: 'event_attributes ZSTD(3)', alter: [codec(t, ['event_attributes'], `Array(${lcMap})`, 'ZSTD(3)')] },
          { name: 'duration Delta', alter: [codec(t, ['duration_ns'], 'UInt64', 'Delta, ZSTD(1)')] },
        ]),
    { name: 'every ZSTD(1) as ZSTD(3)', alter: [big('ZSTD(3)')] },
    { name: 'every ZSTD(1) as ZSTD(3) + maps ZSTD(6)', alter: [big('ZSTD(3)'), codec(t, maps, lcMap, 'ZSTD(6)')] },
    ...(t === 'spans'
      ? [
          {
            name: 'every ZSTD(1) as ZSTD(3) + events Delta',
            alter: [big('ZSTD(3)'), codec(t, ['event_timestamps'], 'Array(DateTime64(9))', 'Delta(8), ZSTD(3)')],
          },
          {
            name: 'every ZSTD(1) as ZSTD(3) + events Delta + maps ZSTD(6)',
            alter: [big('ZSTD(3)'), codec(t, ['event_timestamps'], 'Array(DateTime64(9))', 'Delta(8), ZSTD(3)'), codec(t, maps, lcMap, 'ZSTD(6)')],
          },
        ]
      : []),
    {
      name: 'ids FixedString',
      measureOnly: true,
      alter: [],
      columnTypes: Object.fromEntries(Object.entries(ids).map(([c, n]) => [c, `FixedString(${n}) CODEC(ZSTD(1))`])),
      select: (c: string) => (ids[c] === undefined ? c : `unhex(${c})`),
    },
    // The corpus repeats each template's span ids (8,000 distinct in all); real span ids never repeat.
    {
      name: 'corpus: unique span ids',
      measureOnly: true,
      alter: [],
      select: (c: string) => (c === 'span_id' ? 'lower(hex(reinterpretAsFixedString(cityHash64(trace_id, span_id))))' : c),
    },
  ];
  const wanted = args.variants?.split('|').map((v) => v.trim());
  return wanted === undefined ? all : all.filter((v) => wanted.includes(v.name));
}

// ---------------------------------------------------------------- the corpus

const principal: Principal = { name: 'bench', scopes: new Set(['ingest']), tenants: '*' };

/** Writes `blocks` files of `blockRows` gateway rows each (the bench:peers bodies through the gateway's protobuf converter). */
function stageCorpus(dir: string, table: Table): string[] {
  const factory = new RequestFactory();
  const converter = rowConverters()[table === 'logs' ? 'logs' : 'traces'].protobuf;
  return Array.from({ length: blocks }, (_, b) => {
    const chunks: Buffer[] = [];
    for (let rows = 0; rows < blockRows; rows += itemsPerRequest) {
      const result = converter.convert(factory.next(table === 'logs' ? 'logs' : 'traces').body, new TenantResolver(principal));
      if (!result.ok) throw new Error(result.error);
      chunks.push(result.value.rows);
    }
    const path = join(dir, `${table}-${b}.bin`);
    writeFileSync(path, Buffer.concat(chunks));
    return path;
  });
}

// ---------------------------------------------------------------- measuring

async function rows<T>(store: Store, query: string, params: Record<string, unknown> = {}): Promise<T[]> {
  return (await store.client.query({ query, query_params: params, format: 'JSONEachRow' })).json<T>();
}

/** ProfileEvents totals of the process (chDB keeps no query_log: a query's events are the difference of two snapshots). */
async function events(store: Store): Promise<Map<string, number>> {
  const list = await rows<{ event: string; value: string }>(store, 'SELECT event, toString(value) AS value FROM system.events');
  return new Map(list.map((e) => [e.event, Number(e.value)]));
}

function difference(after: Map<string, number>, before: Map<string, number>): Map<string, number> {
  return new Map([...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const).filter(([, v]) => v !== 0));
}

const queryCpu = (e: Map<string, number>): number => (e.get('UserTimeMicroseconds') ?? 0) + (e.get('SystemTimeMicroseconds') ?? 0);

interface Measured {
  readonly cpuMicros: number;
  readonly processMicros: number;
  readonly wallMs: number;
  readonly events: Map<string, number>;
}

async function measured(store: Store, run: () => Promise<unknown>): Promise<Measured> {
  const before = await events(store);
  const cpu = process.cpuUsage();
  const started = performance.now();
  await run();
  const wallMs = performance.now() - started;
  const used = process.cpuUsage(cpu);
  const e = difference(await events(store), before);
  return { cpuMicros: queryCpu(e), processMicros: used.user + used.system, wallMs, events: e };
}

const databaseName = (t: Table, i: number): string => `ic_${t}_${i}`;

async function createVariant(base: Store, t: Table, i: number, v: Variant): Promise<Store> {
  const store: Store = { ...base, database: databaseName(t, i), close: () => Promise.resolve() };
  await base.client.command({ query: `DROP DATABASE IF EXISTS ${store.database}` });
  if (v.columnTypes !== undefined) {
    const types = v.columnTypes;
    const spec = (t === 'logs' ? logsTable : spansTable)(retention);
    const columns = spec.columns.map((c) => {
      const name = c.slice(0, c.indexOf(' '));
      return types[name] === undefined ? c : `${name} ${types[name]}`;
    });
    await base.client.command({ query: createDatabase(store) });
    for (const statement of createTable(store, { ...spec, columns })) await base.client.command({ query: statement });
  }
  const migrated = await migrate(
    store,
    retention,
    silentLogger,
    migrations.filter((m) => m.version <= (v.upTo ?? Infinity)),
  );
  if (!migrated.ok) throw new Error(migrated.error.message);
  for (const statement of v.alter) await base.client.command({ query: statement.replaceAll('{db}', store.database) });
  await base.client.command({ query: `SYSTEM STOP MERGES ${store.database}.${t}` });
  return store;
}

/** One block as the write-ahead log's inserter sends it (src/clickhouse/row-binary-insert.ts), with the variant's SELECT list. */
function insertBlock(store: Store, t: Table, v: Variant, path: string, token: string): Promise<unknown> {
  const target = rowTargets[t];
  const select = v.select === undefined ? '*' : target.columns.map(v.select).join(', ');
  return store.client.command({
    query: `INSERT INTO ${store.database}.${v.into ?? t} (${target.columns.join(', ')}) SELECT ${select} FROM file({path:String}, 'RowBinary', {structure:String})
      ${insertSettings(token, undefined).replace(skipIndexesAtMerge, v.skipIndexSetting ?? skipIndexesAtMerge)}`,
    query_params: { path, structure: v.structure === undefined ? target.structure : v.structure(target.structure) },
  });
}

interface AtRest {
  readonly rows: number;
  readonly bytes: number;
  readonly parts: number;
  readonly content: string;
}

async function atRest(store: Store, t: Table): Promise<AtRest> {
  const [r] = await rows<{ rows: string; bytes: string; parts: string }>(
    store,
    'SELECT toString(sum(rows)) AS rows, toString(sum(bytes_on_disk)) AS bytes, toString(count()) AS parts FROM system.parts WHERE database = {db:String} AND table = {t:String} AND active',
    { db: store.database, t },
  );
  // What the rows hold, whatever the codecs: equal to current's unless the variant stores other values.
  const [c] = await rows<{ content: string }>(
    store,
    `SELECT toString(sum(cityHash64(${rowTargets[t].columns.join(', ')}))) AS content FROM ${store.database}.${t}`,
  );
  return { rows: Number(r?.rows), bytes: Number(r?.bytes), parts: Number(r?.parts), content: c?.content ?? '' };
}

/** Bytes per row of each column (compressed data + marks) and each skip index. */
async function breakdown(store: Store, t: Table, rowCount: number): Promise<Array<[string, number]>> {
  const columns = await rows<{ name: string; bytes: string }>(
    store,
    'SELECT column AS name, toString(sum(column_bytes_on_disk)) AS bytes FROM system.parts_columns WHERE database = {db:String} AND table = {t:String} AND active GROUP BY column',
    { db: store.database, t },
  );
  const indexes = await rows<{ name: string; bytes: string }>(
    store,
    'SELECT name, toString(data_compressed_bytes + marks_bytes) AS bytes FROM system.data_skipping_indices WHERE database = {db:String} AND table = {t:String}',
    { db: store.database, t },
  );
  return [
    ...columns.map((c) => [c.name, Number(c.bytes) / rowCount] as [string, number]),
    ...indexes.map((i) => [`INDEX ${i.name}`, Number(i.bytes) / rowCount] as [string, number]),
  ].sort((a, b) => b[1] - a[1]);
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? (s[mid] ?? NaN) : ((s[mid - 1] ?? NaN) + (s[mid] ?? NaN)) / 2;
};

const say = (line: string): void => {
  process.stderr.write(`[insert-cost ${new Date().toISOString().slice(11, 19)}] ${line}\n`);
};
const f1 = (x: number): string => x.toFixed(1);
const f2 = (x: number): string => x.toFixed(2);

/** ProfileEvents that say where an INSERT's time goes, in µs per row. */
const timeEvents = /Microseconds$/;

async function measureTable(base: Store, dir: string, t: Table): Promise<void> {
  const vs = variants(t);
  say(`${t}: staging ${blocks} blocks of ${blockRows} rows from the bench:peers corpus`);
  const files = stageCorpus(dir, t);
  const stores = await Promise.all(vs.map((v, i) => createVariant(base, t, i, v)));
  const samples = vs.map(() => ({ cpu: [] as number[], process: [] as number[], wall: [] as number[] }));
  const currentEvents: Array<Map<string, number>> = [];
  for (let b = 0; b < files.length; b++) {
    say(`${t}: block ${b + 1}/${files.length} into ${vs.length} variants`);
    for (let k = 0; k < vs.length; k++) {
      const i = (b + k) % vs.length;
      const [v, store, file] = [vs[i], stores[i], files[b]];
      if (v === undefined || store === undefined || file === undefined) throw new Error('bug: variant index');
      const m = await measured(store, () => insertBlock(store, t, v, file, `${t}-${b}`));
      const rowCount = m.events.get('InsertedRows') ?? 0;
      if (rowCount < blockRows) throw new Error(`${t} ${v.name}: inserted ${rowCount} rows, expected at least ${blockRows}`);
      samples[i]?.cpu.push(m.cpuMicros / blockRows);
      samples[i]?.process.push(m.processMicros / blockRows);
      samples[i]?.wall.push((m.wallMs * 1000) / blockRows);
      if (v.name === 'current') currentEvents.push(m.events);
    }
  }
  say(`${t}: OPTIMIZE FINAL per variant`);
  const results = [];
  for (let i = 0; i < vs.length; i++) {
    const [v, store] = [vs[i], stores[i]];
    if (v === undefined || store === undefined) throw new Error('bug: variant index');
    await base.client.command({ query: `SYSTEM START MERGES ${store.database}.${t}` });
    const merge = await measured(store, () => base.client.command({ query: `OPTIMIZE TABLE ${store.database}.${t} FINAL` }));
    const rest = await atRest(store, t);
    const s = samples[i];
    const columns = rest.rows === 0 ? new Map<string, number>() : new Map(await breakdown(store, t, rest.rows));
    results.push({
      v,
      insert: median(s?.cpu ?? []),
      process: median(s?.process ?? []),
      wall: median(s?.wall ?? []),
      merge: merge.cpuMicros / rest.rows,
      rest,
      store,
      columns,
    });
  }
  const current = results.find((r) => r.v.name === 'current');
  const ratio = (x: number, y: number | undefined): string => (y === undefined || y === 0 ? '   -' : f2(x / y).padStart(5));
  process.stdout.write(`\n${t}: ${blocks} blocks of ${blockRows} gateway rows per variant; medians per block; µs and bytes per row; ratios vs current\n`);
  process.stdout.write(
    `${'variant'.padEnd(44)} ${'insert cpu'.padStart(10)} ${'×'.padStart(5)} ${'process'.padStart(8)} ${'wall'.padStart(6)} ${'merge cpu'.padStart(9)} ${'B/row'.padStart(6)} ${'×'.padStart(5)} parts rows  columns that changed (B/row)\n`,
  );
  const num = (x: number, digits: number, width: number): string => (Number.isFinite(x) ? x.toFixed(digits) : '-').padStart(width);
  for (const r of results) {
    const bytes = r.rest.bytes / r.rest.rows;
    const changed =
      current === undefined || r === current
        ? []
        : [...new Set([...r.columns.keys(), ...current.columns.keys()])]
            .map((c) => [c, current.columns.get(c) ?? 0, r.columns.get(c) ?? 0] as const)
            .filter(([, a, b]) => Math.abs(a - b) >= 0.2 && r.rest.rows > 0)
            .map(([c, a, b]) => `${c} ${f1(a)}→${f1(b)}`);
    process.stdout.write(
      `${(r.v.name + (r.v.measureOnly === true ? ' (measure only)' : '')).padEnd(44)} ${f2(r.insert).padStart(10)} ${ratio(r.insert, current?.insert)} ${f2(r.process).padStart(8)} ${f2(r.wall).padStart(6)} ${num(r.merge, 2, 9)} ${num(bytes, 1, 6)} ${Number.isFinite(bytes) ? ratio(bytes, current === undefined ? undefined : current.rest.bytes / current.rest.rows) : '    -'} ${String(r.rest.parts).padStart(5)} ${r.rest.rows === 0 ? ' ' : r.rest.content === current?.rest.content ? '=' : '≠'}  ${changed.join(', ')}\n`,
    );
  }
  if (current !== undefined) {
    const rowCount = current.rest.rows;
    process.stdout.write(`\n${t} (current): bytes per row by column and skip index, after OPTIMIZE FINAL (total ${f1(current.rest.bytes / rowCount)})\n`);
    for (const [name, b] of await breakdown(current.store, t, rowCount)) if (b >= 0.05) process.stdout.write(`  ${name.padEnd(40)} ${f2(b).padStart(6)}\n`);
    const sums = new Map<string, number>();
    for (const e of currentEvents) for (const [k, v] of e) sums.set(k, (sums.get(k) ?? 0) + v);
    const inserted = blockRows * currentEvents.length;
    process.stdout.write(`\n${t} (current): INSERT ProfileEvents, µs per row (threads overlap; CPU = User+System)\n`);
    for (const [k, v] of [...sums].filter(([k]) => timeEvents.test(k)).sort((a, b) => b[1] - a[1])) {
      if (v / inserted >= 0.01) process.stdout.write(`  ${k.padEnd(56)} ${f2(v / inserted).padStart(8)}\n`);
    }
    for (const k of ['MergeTreeDataWriterUncompressedBytes', 'MergeTreeDataWriterCompressedBytes', 'ReadBufferFromFileDescriptorReadBytes', 'InsertedBytes']) {
      process.stdout.write(`  ${`${k} per row`.padEnd(56)} ${f1((sums.get(k) ?? 0) / inserted).padStart(8)}\n`);
    }
  }
  for (const store of stores) await base.client.command({ query: `DROP DATABASE IF EXISTS ${store.database}` });
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'tenantry-insert-cost-'));
  const opened = await openStore({ kind: 'embedded', dataDir: dir, database: 'unused' });
  if (!opened.ok) throw new Error(opened.error);
  try {
    for (const t of tables) await measureTable(opened.value, opened.value.spoolDir ?? dir, t);
  } finally {
    await opened.value.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
