// Filter conditions (DESIGN.md section 5): the values of one field OR
// together, fields AND together; a value containing `%` is a LIKE pattern
// (`%` any run, `_` one character, `\` escapes), anything else an exact
// match. Values and attribute keys are always bound parameters.
import type { SqlParams } from '../../query/sql-params.ts';

export const isPattern = (value: string): boolean => value.includes('%');

/** `column` matches any of `values` (case-sensitive). */
export function matchAny(params: SqlParams, column: string, values: readonly string[]): string {
  const exact = values.filter((v) => !isPattern(v));
  const patterns = values.filter(isPattern);
  const parts = [
    ...(exact.length === 0
      ? []
      : [exact.length === 1 ? `${column} = ${params.bind(exact[0], 'String')}` : `${column} IN ${params.bind(exact, 'Array(String)')}`]),
    ...patterns.map((p) => `like(${column}, ${params.bind(p, 'String')})`),
  ];
  return parts.length === 1 ? (parts[0] ?? 'false') : `(${parts.join(' OR ')})`;
}

/** Escapes LIKE metacharacters so an exact value can go through ILIKE. */
export const escapeLike = (value: string): string => value.replace(/[\\%_]/g, (c) => `\\${c}`);

/** `column` matches any of `values`, case-insensitively (used for log bodies). */
export function matchAnyInsensitive(params: SqlParams, column: string, values: readonly string[]): string {
  const parts = values.map((v) => `ilike(${column}, ${params.bind(isPattern(v) ? v : escapeLike(v), 'String')})`);
  return parts.length === 1 ? (parts[0] ?? 'false') : `(${parts.join(' OR ')})`;
}

/**
 * Every key of `filter` matches in the merged attributes, `maps` listed from
 * weakest to strongest (resource, scope, item): the value of a key is the
 * item's if it has the key, else the scope's, else the resource's. The
 * per-map test comes first because it is what the bloom-filter indexes on
 * map keys and values can use; the merged test then settles precedence.
 */
export function matchAttributes(params: SqlParams, maps: readonly string[], filter: Readonly<Record<string, readonly string[]>>): string[] {
  return Object.entries(filter).map(([key, values]) => {
    const k = params.bind(key, 'String');
    const perMap = maps.map((m) => `(mapContains(${m}, ${k}) AND ${matchAny(params, `${m}[${k}]`, values)})`);
    const strongestFirst = [...maps].reverse();
    const merged = `multiIf(${strongestFirst
      .slice(0, -1)
      .map((m) => `mapContains(${m}, ${k}), ${m}[${k}]`)
      .join(', ')}, ${strongestFirst[strongestFirst.length - 1] ?? "''"}[${k}])`;
    return `((${perMap.join(' OR ')}) AND ${matchAny(params, merged, values)})`;
  });
}

export const severityRanges = {
  UNSPECIFIED: [0, 0],
  TRACE: [1, 4],
  DEBUG: [5, 8],
  INFO: [9, 12],
  WARN: [13, 16],
  ERROR: [17, 20],
  FATAL: [21, 24],
} as const;
export type Severity = keyof typeof severityRanges;
export const severities = Object.keys(severityRanges) as Severity[];

/** OTLP severity number → API severity name. */
export function severityName(n: number): Severity {
  for (const name of severities) {
    const [lo, hi] = severityRanges[name];
    if (n >= lo && n <= hi) return name;
  }
  return 'UNSPECIFIED';
}

/** Severity names → a condition over severity_number ranges. */
export function matchSeverity(params: SqlParams, column: string, names: readonly Severity[]): string {
  const parts = [...new Set(names)].map((n) => {
    const [lo, hi] = severityRanges[n];
    return lo === hi ? `${column} = ${params.bind(lo, 'UInt8')}` : `${column} BETWEEN ${params.bind(lo, 'UInt8')} AND ${params.bind(hi, 'UInt8')}`;
  });
  return `(${parts.join(' OR ')})`;
}
