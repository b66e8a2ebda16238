// Bytes at rest for bench:peers, read from the files each system keeps, so
// that no product API is needed: folder sizes for Loki (chunks + index) and
// Tempo (blocks), and for Tenantry the active parts of a ClickHouse table,
// found from the part folder names as ClickHouse does on start (a part
// covered by a merged part of the same partition is outdated, waiting for
// removal) — what `sum(bytes_on_disk) FROM system.parts WHERE active` says.
import { readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Total size in bytes of the files under `path` (0 if it does not exist). */
export function folderBytes(path: string): number {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.size;
  return readdirSync(path).reduce((sum, name) => sum + folderBytes(join(path, name)), 0);
}

interface PartName { readonly name: string; readonly partition: string; readonly min: number; readonly max: number; readonly level: number; readonly mutation: number }

/** `<partition>_<min>_<max>_<level>[_<mutation>]`; partition ids hold no underscore. */
function parsePart(name: string): PartName | undefined {
  const fields = name.split('_');
  if (fields.length !== 4 && fields.length !== 5) return undefined;
  const [partition, ...numbers] = fields;
  if (partition === undefined || !numbers.every((n) => /^\d+$/.test(n))) return undefined;
  const [min, max, level, mutation] = numbers.map(Number);
  return { name, partition, min: min ?? 0, max: max ?? 0, level: level ?? 0, mutation: mutation ?? 0 };
}

export interface TableAtRest { readonly parts: number; readonly rows: number; readonly bytes: number }

/** Active parts of a MergeTree table folder (`<data dir>/clickhouse/data/<db>/<table>`): count, rows (count.txt) and bytes (unless `rowsOnly`). */
export function activeParts(tableDir: string, rowsOnly = false): TableAtRest {
  let dir: string;
  try {
    dir = realpathSync(tableDir);
  } catch {
    return { parts: 0, rows: 0, bytes: 0 };
  }
  const parts = readdirSync(dir).map(parsePart).filter((p): p is PartName => p !== undefined);
  const covers = (q: PartName, p: PartName): boolean => q !== p && q.partition === p.partition && q.min <= p.min && q.max >= p.max
    && q.level >= p.level && q.mutation >= p.mutation && (q.level > p.level || q.mutation > p.mutation || q.min < p.min || q.max > p.max);
  const active = parts.filter((p) => !parts.some((q) => covers(q, p)));
  let rows = 0;
  let bytes = 0;
  for (const part of active) {
    const path = join(dir, part.name);
    try {
      rows += Number(readFileSync(join(path, 'count.txt'), 'utf8').trim());
    } catch {
      // a part being removed
    }
    if (!rowsOnly) bytes += folderBytes(path);
  }
  return { parts: active.length, rows, bytes };
}

/** Loki after /flush: chunks (the filesystem object store, with the shipped index) and the TSDB index folder; the WAL is kept apart. */
export function lokiAtRest(dir: string): { readonly bytes: number; readonly chunks: number; readonly index: number; readonly wal: number } {
  const chunks = folderBytes(join(dir, 'chunks'));
  const index = folderBytes(join(dir, 'tsdb-shipper-active')) + folderBytes(join(dir, 'tsdb-shipper-cache'));
  return { bytes: chunks + index, chunks, index, wal: folderBytes(join(dir, 'wal')) };
}

/** Tempo after /flush: the blocks of the local backend (and the traces their meta.json count); the WAL is kept apart. */
export function tempoAtRest(dir: string): { readonly bytes: number; readonly blocks: number; readonly traces: number; readonly wal: number } {
  const root = join(dir, 'blocks');
  let blocks = 0;
  let traces = 0;
  let tenants: string[] = [];
  try {
    tenants = readdirSync(root);
  } catch {
    // nothing flushed
  }
  for (const tenant of tenants) {
    let ids: string[];
    try {
      ids = readdirSync(join(root, tenant));
    } catch {
      continue;
    }
    for (const id of ids) {
      try {
        const meta = JSON.parse(readFileSync(join(root, tenant, id, 'meta.json'), 'utf8')) as { totalObjects?: number };
        blocks++;
        traces += meta.totalObjects ?? 0;
      } catch {
        // not a block (an index file, or a block being written)
      }
    }
  }
  return { bytes: folderBytes(root), blocks, traces, wal: folderBytes(join(dir, 'wal')) };
}
