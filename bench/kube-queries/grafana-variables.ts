// Grafana's interpolation of a dashboard query before it reaches the data
// source, for one range query: the built-in intervals as Grafana computes
// them for a 60 s step and Grafana's default 15 s scrape interval
// ($__rate_interval = max($__interval + scrape, 4 × scrape)), and each query
// variable's value as Grafana picks it on load: the saved selection when the
// options hold it, All (the variable's allValue, else every option as one
// regex) when saved or when the variable includes All, else the first option.

/** A variable's query as Grafana's Prometheus data source reads it. */
export type VariableQuery =
  | { readonly kind: 'label_values'; readonly label: string; readonly match?: string }
  | { readonly kind: 'query_result'; readonly expr: string }
  | { readonly kind: 'other'; readonly text: string };

/** Reads `label_values(label)`, `label_values(selector, label)` and `query_result(expr)`. */
export function parseVariableQuery(text: string): VariableQuery {
  const t = text.trim();
  const withMatch = /^label_values\(\s*([\s\S]+?)\s*,\s*([\w]+)\s*\)$/.exec(t);
  if (withMatch?.[1] !== undefined && withMatch[2] !== undefined) return { kind: 'label_values', match: withMatch[1], label: withMatch[2] };
  const bare = /^label_values\(\s*([\w]+)\s*\)$/.exec(t);
  if (bare?.[1] !== undefined) return { kind: 'label_values', label: bare[1] };
  const result = /^query_result\(([\s\S]+)\)$/.exec(t);
  if (result?.[1] !== undefined) return { kind: 'query_result', expr: result[1] };
  return { kind: 'other', text: t };
}

/** The built-in variables for a range query of `rangeS` seconds at `stepS`. */
export function builtins(stepS: number, rangeS: number, scrapeS = 15): Map<string, string> {
  return new Map([
    ['__interval', `${stepS}s`],
    ['__interval_ms', String(stepS * 1000)],
    ['__rate_interval', `${Math.max(stepS + scrapeS, 4 * scrapeS)}s`],
    ['__range', `${rangeS}s`],
    ['__range_s', String(rangeS)],
    ['__range_ms', String(rangeS * 1000)],
  ]);
}

/** Grafana's escape of one value inside an All regex (doubled: it sits in a PromQL string). */
const regexEscape = (v: string): string => v.replace(/\\/g, '\\\\\\\\').replace(/[$^*{}[\]'+?.()|]/g, '\\\\$&');

/** The value a variable takes on load, from its options (sorted as its query answered). */
export function chooseValue(def: { readonly includeAll: boolean; readonly allValue?: string; readonly current?: string }, options: readonly string[]): string {
  const all = def.allValue ?? (options.length === 1 ? (options[0] ?? '') : `(${options.map(regexEscape).join('|')})`);
  if (def.current === '$__all') return all;
  if (def.current !== undefined && options.includes(def.current)) return def.current;
  if (def.includeAll) return all;
  return options[0] ?? '';
}

/** `$name`, `${name}`, `${name:format}` and `[[name]]`: replaced when `values` knows the name, else kept (`$1` of label_replace). */
export function interpolate(expr: string, values: ReadonlyMap<string, string>): string {
  return expr.replace(/\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]/g, (m, a?: string, b?: string, c?: string) => values.get(a ?? b ?? c ?? '') ?? m);
}
