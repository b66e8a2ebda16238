// Asks a Prometheus HTTP API (Prometheus itself, or Tenantry's /prometheus)
// a range query, and compares two answers: the same series (the reference's
// `tenant` label dropped: it is how one Prometheus holds every tenant), the
// same timestamps, values equal within 1e-9 relative (NaN equals NaN, an
// infinity only itself). bench/ keeps its own copy rather than importing
// test/.

export interface Endpoint {
  /** `http://host:port` for Prometheus, `http://host:port/prometheus` for Tenantry. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
}

export interface RangeWindow {
  /** Unix seconds. */
  readonly start: number;
  readonly end: number;
  readonly step: number;
}

/** The parts of Prometheus' envelope the comparison reads. */
export interface Answer {
  readonly httpStatus: number;
  readonly status: string;
  readonly error?: string;
  readonly resultType?: string;
  readonly result?: unknown;
}

type Point = readonly [number, string];
interface Series {
  readonly key: string;
  readonly points: readonly Point[];
}

/** A range query (a form-encoded POST, as Grafana sends it), bounded by `timeoutMs`. */
export async function rangeQuery(endpoint: Endpoint, query: string, w: RangeWindow, timeoutMs = 60_000): Promise<Answer> {
  const body = new URLSearchParams({ query, start: String(w.start), end: String(w.end), step: String(w.step) }).toString();
  const res = await fetch(`${endpoint.url}/api/v1/query_range`, {
    method: 'POST',
    headers: { ...endpoint.headers, 'content-type': 'application/x-www-form-urlencoded' },
    body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  try {
    const b = JSON.parse(text) as { status?: unknown; error?: unknown; data?: { resultType?: unknown; result?: unknown } };
    return {
      httpStatus: res.status,
      status: String(b.status),
      ...(typeof b.error === 'string' ? { error: b.error } : {}),
      ...(typeof b.data?.resultType === 'string' ? { resultType: b.data.resultType } : {}),
      ...(b.data?.result !== undefined ? { result: b.data.result } : {}),
    };
  } catch {
    return { httpStatus: res.status, status: 'unparsable', error: text.slice(0, 300) };
  }
}

function keyOf(metric: unknown): string {
  const labels = Object.entries((metric ?? {}) as Record<string, string>)
    .filter(([k]) => k !== 'tenant')
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${labels.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ')}}`;
}

function seriesOf(a: Answer): Series[] {
  if (a.resultType !== 'matrix' || !Array.isArray(a.result)) return [];
  return (a.result as Array<{ metric: unknown; values?: Point[] }>)
    .map((s) => ({ key: keyOf(s.metric), points: s.values ?? [] }))
    .sort((x, y) => (x.key < y.key ? -1 : 1));
}

const parse = (text: string): number => (text === '+Inf' || text === 'Inf' ? Infinity : text === '-Inf' ? -Infinity : Number(text));

function sameValue(a: string, b: string): boolean {
  if (a === b) return true;
  const x = parse(a);
  const y = parse(b);
  if (Number.isNaN(x) || Number.isNaN(y)) return Number.isNaN(x) && Number.isNaN(y);
  if (!Number.isFinite(x) || !Number.isFinite(y)) return x === y;
  return Math.abs(x - y) <= 1e-9 * Math.max(Math.abs(x), Math.abs(y));
}

/** How `got` differs from `reference`, or undefined when they are equal. */
export function difference(reference: Answer, got: Answer): string | undefined {
  if (reference.status !== 'success') return `reference failed: ${reference.error ?? reference.httpStatus}`;
  if (got.status !== 'success') return `HTTP ${got.httpStatus}: ${(got.error ?? '').slice(0, 200)}`;
  if (reference.resultType !== got.resultType) return `resultType ${String(got.resultType)}, expected ${String(reference.resultType)}`;
  const ref = seriesOf(reference);
  const gs = seriesOf(got);
  if (ref.length === 0) return 'the reference answered no series';
  if (ref.length !== gs.length) return `${gs.length} series, expected ${ref.length}`;
  for (const [i, r] of ref.entries()) {
    const g = gs[i];
    if (g === undefined || g.key !== r.key) return `series ${g?.key ?? '?'}, expected ${r.key}`;
    if (g.points.length !== r.points.length) return `${r.key}: ${g.points.length} points, expected ${r.points.length}`;
    for (const [j, [t, v]] of r.points.entries()) {
      const p = g.points[j];
      if (p?.[0] !== t) return `${r.key}: point ${j} at ${String(p?.[0])}, expected ${t}`;
      if (!sameValue(v, p[1])) return `${r.key} @${t}: ${p[1]}, expected ${v}`;
    }
  }
  return undefined;
}

/** Series and points of an answer, for the report. */
export function shapeOf(a: Answer): { series: number; points: number } {
  const s = seriesOf(a);
  return { series: s.length, points: s.reduce((n, x) => n + x.points.length, 0) };
}
