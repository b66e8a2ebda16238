// Asks a Prometheus HTTP API (the real Prometheus, or Tenantry's /prometheus)
// instant and range queries, and compares two answers series by series: the
// same label sets, the same timestamps, values equal within 1e-9 relative
// (NaN equals NaN, infinities equal themselves).

export interface PromEndpoint {
  /** Base URL: `http://host:port` for Prometheus, `http://host:port/prometheus` for Tenantry. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

export type PromEvaluation =
  { readonly kind: 'instant'; readonly time: number } | { readonly kind: 'range'; readonly start: number; readonly end: number; readonly step: number };

/** The parts of Prometheus's response envelope the comparison reads. */
export interface PromAnswer {
  readonly httpStatus: number;
  readonly status: string;
  readonly errorType?: string;
  readonly error?: string;
  readonly resultType?: string;
  readonly result?: unknown;
  /** The envelope's annotations ([] when absent). */
  readonly warnings?: readonly string[];
  readonly infos?: readonly string[];
}

/** One series of an answer: its labels (sorted) and its points as [seconds, value string]. */
interface Series {
  readonly key: string;
  readonly points: ReadonlyArray<readonly [number, string]>;
}

/** GET for instant queries, form-encoded POST for range queries (Grafana sends both). */
export async function promQuery(endpoint: PromEndpoint, query: string, at: PromEvaluation): Promise<PromAnswer> {
  const params = new URLSearchParams({ query });
  let res: Response;
  if (at.kind === 'instant') {
    params.set('time', String(at.time));
    res = await fetch(`${endpoint.url}/api/v1/query?${params.toString()}`, { headers: { ...endpoint.headers } });
  } else {
    params.set('start', String(at.start));
    params.set('end', String(at.end));
    params.set('step', String(at.step));
    res = await fetch(`${endpoint.url}/api/v1/query_range`, {
      method: 'POST',
      headers: { ...endpoint.headers, 'content-type': 'application/x-www-form-urlencoded' },
      body: params.toString(),
    });
  }
  return parseAnswer(res.status, await res.text());
}

function parseAnswer(httpStatus: number, text: string): PromAnswer {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return { httpStatus, status: 'unparsable', error: text.slice(0, 300) };
  }
  if (typeof body !== 'object' || body === null) return { httpStatus, status: 'unparsable', error: text.slice(0, 300) };
  const b = body as {
    status?: unknown;
    errorType?: unknown;
    error?: unknown;
    data?: { resultType?: unknown; result?: unknown };
    warnings?: unknown;
    infos?: unknown;
  };
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);
  const answer: PromAnswer = {
    httpStatus,
    status: String(b.status),
    ...(typeof b.errorType === 'string' ? { errorType: b.errorType } : {}),
    ...(typeof b.error === 'string' ? { error: b.error } : {}),
    ...(typeof b.data?.resultType === 'string' ? { resultType: b.data.resultType } : {}),
    ...(b.data?.result !== undefined ? { result: b.data.result } : {}),
    warnings: strings(b.warnings),
    infos: strings(b.infos),
  };
  return answer;
}

function labelKey(metric: unknown): string {
  const labels = Object.entries((metric ?? {}) as Record<string, string>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${labels.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}}`;
}

type RawPoint = readonly [number, string];

/** The answer's series, sorted by label set (a scalar is one series with no labels). */
function seriesOf(answer: PromAnswer): Series[] {
  const result = answer.result;
  switch (answer.resultType) {
    case 'scalar':
    case 'string':
      return [{ key: '{}', points: [result as RawPoint] }];
    case 'vector':
      return (result as Array<{ metric: unknown; value: RawPoint }>)
        .map((s) => ({ key: labelKey(s.metric), points: [s.value] }))
        .sort((a, b) => (a.key < b.key ? -1 : 1));
    case 'matrix':
      return (result as Array<{ metric: unknown; values: RawPoint[] }>)
        .map((s) => ({ key: labelKey(s.metric), points: s.values }))
        .sort((a, b) => (a.key < b.key ? -1 : 1));
    default:
      return [];
  }
}

/** A sample value as Prometheus prints it (`+Inf`, `-Inf` and `NaN` are not JavaScript number literals). */
function parseValue(text: string): number {
  switch (text) {
    case '+Inf':
    case 'Inf':
      return Infinity;
    case '-Inf':
      return -Infinity;
    default:
      return Number(text);
  }
}

/** Whether two sample values (Prometheus' strings) are equal within 1e-9 relative. */
export function sameValue(a: string, b: string): boolean {
  if (a === b) return true;
  const x = parseValue(a);
  const y = parseValue(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) && Number.isNaN(y);
  if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y;
  return Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
}

/** A short description of how the answers differ, or undefined when they are the same. */
export function compareAnswers(reference: PromAnswer, target: PromAnswer): string | undefined {
  if (reference.status !== 'success') return `reference failed: ${reference.errorType ?? ''} ${reference.error ?? ''}`;
  if (target.status !== 'success') return `HTTP ${target.httpStatus} ${target.errorType ?? ''}: ${(target.error ?? '').slice(0, 200)}`;
  if (reference.resultType !== target.resultType) return `resultType ${String(target.resultType)}, expected ${String(reference.resultType)}`;
  const ref = seriesOf(reference);
  const got = seriesOf(target);
  const refKeys = new Set(ref.map((s) => s.key));
  const gotKeys = new Set(got.map((s) => s.key));
  const missing = [...refKeys].filter((k) => !gotKeys.has(k));
  const extra = [...gotKeys].filter((k) => !refKeys.has(k));
  if (missing.length > 0 || extra.length > 0) {
    return `series differ: missing ${missing.slice(0, 3).join(' ')}${missing.length > 3 ? ` (+${missing.length - 3})` : ''}; extra ${extra.slice(0, 3).join(' ')}${extra.length > 3 ? ` (+${extra.length - 3})` : ''}`;
  }
  if (ref.length !== got.length) return `${got.length} series, expected ${ref.length} (duplicate label sets)`;
  for (const [i, r] of ref.entries()) {
    const g = got[i];
    if (g === undefined) return 'internal: series index';
    if (r.points.length !== g.points.length) {
      const rt = r.points.map(([t]) => t);
      const gt = g.points.map(([t]) => t);
      return `${r.key}: ${g.points.length} points, expected ${r.points.length} (first times ${gt.slice(0, 3).join(',')} vs ${rt.slice(0, 3).join(',')})`;
    }
    for (const [j, [t, v]] of r.points.entries()) {
      const p = g.points[j];
      if (p === undefined) return 'internal: point index';
      if (p[0] !== t) return `${r.key}: point ${j} at ${p[0]}, expected ${t}`;
      if (!sameValue(v, p[1])) return `${r.key} @${t}: ${p[1]}, expected ${v}`;
    }
  }
  return undefined;
}

/** The answer's label sets and point counts, for a report line. */
export function summarize(answer: PromAnswer): string {
  if (answer.status !== 'success') return `${answer.httpStatus} ${answer.errorType ?? ''} ${answer.error ?? ''}`.slice(0, 300);
  const series = seriesOf(answer);
  return `${String(answer.resultType)} ${series.length} series ${series
    .slice(0, 2)
    .map((s) => `${s.key}=${JSON.stringify(s.points.slice(0, 2))}`)
    .join(' ')}`.slice(0, 400);
}

/** The label sets of an answer (for shape comparisons that ignore values). */
export function labelSets(answer: PromAnswer): string[] {
  return seriesOf(answer).map((s) => s.key);
}

/** The values of an answer's series, by label set. */
export function valuesBySeries(answer: PromAnswer): Map<string, number[]> {
  return new Map(seriesOf(answer).map((s) => [s.key, s.points.map(([, v]) => parseValue(v))]));
}
