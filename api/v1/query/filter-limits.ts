// What one request's filters may hold, checked while the request is decoded,
// before any SQL is built (DESIGN.md section 10): a LIKE pattern must be
// well formed (ClickHouse refuses a trailing lone backslash at run time), and
// the request as a whole is bounded in patterns, values and bytes. Patterns
// bound the SQL text (an attribute pattern appears four times: once per map
// and once for the merged value), values and bytes bound the bound
// parameters (which travel in the URL in server mode).
import * as t from 'io-ts';
import { isPattern } from './filters.ts';

export const filterLimits = {
  /** Most characters in one pattern (a value containing `%`). */
  patternChars: 1024,
  /** Most patterns in one request, over every field and attribute key. */
  patterns: 100,
  /** Most filter values in one request, over every field and attribute key. */
  values: 1000,
  /** Most UTF-8 bytes of filter values and attribute keys in one request. */
  bytes: 65_536,
} as const;

/** One filter field of a request: where it sits (for messages) and its values. */
export interface FilterField {
  readonly path: string;
  readonly values: readonly string[];
}

/** Why a pattern is malformed (`\` escapes only `%`, `_` and `\`), undefined when it is well formed. */
export function patternProblem(pattern: string): string | undefined {
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i] !== '\\') continue;
    const next = pattern[i + 1];
    if (next === undefined) return 'ends in a lone "\\" (write "\\\\" for a literal backslash)';
    if (next !== '%' && next !== '_' && next !== '\\')
      return `has "\\${next}": in a pattern "\\" escapes only %, _ and \\ (write "\\\\" for a literal backslash)`;
    i++;
  }
  return undefined;
}

const quote = (s: string): string => JSON.stringify(s.length > 40 ? `${s.slice(0, 37)}...` : s);

/** The first reason `fields` are outside the limits or hold a malformed pattern, undefined when they are fine. */
export function filterProblem(fields: readonly FilterField[]): string | undefined {
  let patterns = 0;
  let values = 0;
  let bytes = 0;
  for (const { path, values: list } of fields) {
    bytes += Buffer.byteLength(path);
    for (const [i, value] of list.entries()) {
      values += 1;
      bytes += Buffer.byteLength(value);
      if (!isPattern(value)) continue;
      patterns += 1;
      if (value.length > filterLimits.patternChars)
        return `${path}[${i}] is a pattern of ${value.length} characters: at most ${filterLimits.patternChars} are allowed`;
      const problem = patternProblem(value);
      if (problem !== undefined) return `${path}[${i}] ${quote(value)} ${problem}`;
    }
  }
  if (patterns > filterLimits.patterns)
    return `the filters hold ${patterns} patterns (values containing %): at most ${filterLimits.patterns} are allowed per request`;
  if (values > filterLimits.values) return `the filters hold ${values} values: at most ${filterLimits.values} are allowed per request`;
  if (bytes > filterLimits.bytes) return `the filters hold ${bytes} bytes: at most ${filterLimits.bytes} are allowed per request`;
  return undefined;
}

/** The filter fields of an attribute filter, named `at.key`. */
export function attributeFields(at: string, filter: Readonly<Record<string, readonly string[]>> | undefined): FilterField[] {
  return filter === undefined ? [] : Object.entries(filter).map(([key, values]) => ({ path: `${at}.${key}`, values }));
}

/** `codec` whose decoded value must also keep its filters (`fieldsOf`) within the limits; the failure names the problem. */
export function withFilterLimits<A, O>(codec: t.Type<A, O>, fieldsOf: (value: A) => readonly FilterField[]): t.Type<A, O> {
  return new t.Type<A, O>(
    codec.name,
    (u): u is A => codec.is(u) && filterProblem(fieldsOf(u)) === undefined,
    (u, c) => {
      const decoded = codec.validate(u, c);
      if (decoded._tag === 'Left') return decoded;
      const problem = filterProblem(fieldsOf(decoded.right));
      return problem === undefined ? decoded : t.failure(u, c, problem);
    },
    codec.encode,
  );
}
