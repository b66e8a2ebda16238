// Grafana's label_values(selector, label) as its Prometheus data source asks
// it (GET /api/v1/label/<label>/values with match[] and the dashboard's time
// range), of both systems, and how Tenantry's answer compares: equal means
// the same values as sets.
import type { PromEndpoint } from '../../test/integration/prometheus/support/promql-client.ts';

/** One label values answer: the values, or the HTTP status and error. */
export type LabelValues =
  { readonly ok: true; readonly values: readonly string[] } | { readonly ok: false; readonly httpStatus: number; readonly error: string };

/** Asks one endpoint; a timeout or a refused connection is status 0. */
export async function labelValues(
  endpoint: PromEndpoint,
  label: string,
  match: string | undefined,
  range: { readonly startS: number; readonly endS: number },
  timeoutMs: number,
): Promise<LabelValues> {
  const params = new URLSearchParams({ start: String(range.startS), end: String(range.endS) });
  if (match !== undefined) params.append('match[]', match);
  try {
    const res = await fetch(`${endpoint.url}/api/v1/label/${encodeURIComponent(label)}/values?${params.toString()}`, {
      headers: { ...endpoint.headers },
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    const body = JSON.parse(text) as { status?: unknown; data?: unknown; error?: unknown };
    if (res.status !== 200 || body.status !== 'success' || !Array.isArray(body.data))
      return { ok: false, httpStatus: res.status, error: typeof body.error === 'string' ? body.error : text.slice(0, 300) };
    return { ok: true, values: body.data.filter((v): v is string => typeof v === 'string').sort() };
  } catch (e) {
    return { ok: false, httpStatus: 0, error: String(e).slice(0, 300) };
  }
}

/** How Tenantry's values differ from Prometheus' (as sets), or undefined. */
export function valuesDiff(reference: readonly string[], target: readonly string[]): string | undefined {
  const missing = reference.filter((v) => !target.includes(v));
  const extra = target.filter((v) => !reference.includes(v));
  if (missing.length === 0 && extra.length === 0) return undefined;
  return `values differ: missing ${JSON.stringify(missing.slice(0, 5))}; extra ${JSON.stringify(extra.slice(0, 5))}`;
}
