// Bytes at rest for bench:peers, read from the files each system keeps, so
// that no product API is needed: the data folders of the peers after their
// own flush, and for Tenantry the active parts of a ClickHouse table,
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

interface PartName {
  readonly name: string;
  readonly partition: string;
  readonly min: number;
  readonly max: number;
  readonly level: number;
  readonly mutation: number;
}

/** `<partition>_<min>_<max>_<level>[_<mutation>]`; partition ids hold no underscore. */
function parsePart(name: string): PartName | undefined {
  const fields = name.split('_');
  if (fields.length !== 4 && fields.length !== 5) return undefined;
  const [partition, ...numbers] = fields;
  if (partition === undefined || !numbers.every((n) => /^\d+$/.test(n))) return undefined;
  const [min, max, level, mutation] = numbers.map(Number);
  return { name, partition, min: min ?? 0, max: max ?? 0, level: level ?? 0, mutation: mutation ?? 0 };
}

export interface TableAtRest {
  readonly parts: number;
  readonly rows: number;
  readonly bytes: number;
}

/** Active parts of a MergeTree table folder (`<data dir>/clickhouse/data/<db>/<table>`): count, rows (count.txt) and bytes (unless `rowsOnly`). */
export function activeParts(tableDir: string, rowsOnly = false): TableAtRest {
  let dir: string;
  try {
    dir = realpathSync(tableDir);
  } catch {
    return { parts: 0, rows: 0, bytes: 0 };
  }
  const parts = readdirSync(dir)
    .map(parsePart)
    .filter((p): p is PartName => p !== undefined);
  const covers = (q: PartName, p: PartName): boolean =>
    q !== p &&
    q.partition === p.partition &&
    q.min <= p.min &&
    q.max >= p.max &&
    q.level >= p.level &&
    q.mutation >= p.mutation &&
    (q.level > p.level || q.mutation > p.mutation || q.min < p.min || q.max > p.max);
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

/**
 * Bytes a folder takes on disk (allocated blocks, as `du`), for the peers after
 * their own flush: Badger preallocates its memtable and value-log files, sparse
 * until written, so their apparent size is not what they store.
 */
export function diskBytes(path: string): number {
  let stat;
  try {
    stat = statSync(path);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.blocks * 512;
  return readdirSync(path).reduce((sum, name) => sum + diskBytes(join(path, name)), 0);
}
