// Turns the conformance table's expectations and the corpus model into the
// answer each request must get, and compares an answer with it. The shapes
// are the documented ones (COMPAT-APIS.md "How Tempo's API answers"): search
// traces with `traceID` without leading zeros, spansets of spans with
// 16-hex-digit `spanID`s; traces by id as OTLP resource spans.
import type { ModelSpan, ModelTrace } from './corpus-model.ts';
import { otlpValue } from './corpus-model.ts';
import type { ConformanceRow, Selects } from './conformance-table.ts';
import { canonicalTrace, canonicalValues } from './tempo-client.ts';

type Json = Record<string, unknown>;
const arr = (v: unknown): Json[] => (Array.isArray(v) ? (v as Json[]) : []);

/** A trace id as search answers show it: hex without leading zeros. */
export const searchId = (hex: string): string => hex.replace(/^0+(?=.)/, '');

/** The value a search answer shows for `key` on a span: an intrinsic as a string, else the span's attribute or the resource's, typed. */
function shownValue(s: ModelSpan, key: string): unknown {
  if (key === 'status') return { stringValue: s.status };
  if (key === 'kind') return { stringValue: s.kind };
  if (key === 'statusMessage') return { stringValue: s.statusMessage };
  const v = s.attributes[key] ?? s.resource[key];
  return v === undefined ? undefined : otlpValue(v);
}

/** Names a query reads (attribute names and intrinsics): the only things its spans may show. */
function fieldsNamed(q: string): Set<string> {
  const names = new Set<string>();
  for (const m of q.matchAll(/\.([A-Za-z_][\w.]*[\w])/g)) if (m[1] !== undefined) names.add(m[1]);
  for (const m of q.matchAll(/\b(status|kind|statusMessage|name)\b/g)) if (m[1] !== undefined) names.add(m[1]);
  return names;
}

function summary(t: ModelTrace): Json {
  return {
    traceID: searchId(t.traceId),
    rootServiceName: t.root?.resource['service.name'],
    rootTraceName: t.root?.name,
    startTimeUnixNano: t.startNs.toString(),
    durationMs: Number(t.durationNs / 1_000_000n),
  };
}

const actualSummary = (t: Json): Json => ({
  traceID: t['traceID'],
  rootServiceName: t['rootServiceName'],
  rootTraceName: t['rootTraceName'],
  startTimeUnixNano: t['startTimeUnixNano'],
  durationMs: t['durationMs'],
});

const byId = (a: Json, b: Json): number => String(a['traceID']).localeCompare(String(b['traceID']));

/** The traces a query selects, with their spans. */
export function selected(traces: readonly ModelTrace[], selects: Selects): { trace: ModelTrace; spans: ModelSpan[] }[] {
  return traces.flatMap((trace) => {
    const spans = selects(trace);
    return spans === undefined ? [] : [{ trace, spans }];
  });
}

/**
 * A TraceQL search answer against the traces and spans the row selects:
 * the traces, each one spanset of the selected spans (`matched` counts them),
 * each span's id, start and duration, the fields the row requires shown,
 * and every shown attribute one the query names, with the corpus's value.
 */
function checkSearch(row: ConformanceRow, traces: readonly ModelTrace[], body: unknown, selects: Selects, shows: readonly string[]): string[] {
  const problems: string[] = [];
  const allowed = fieldsNamed(row.params['q'] ?? '');
  const expected = selected(traces, selects)
    .map(({ trace, spans }) => ({
      ...summary(trace),
      matched: spans.length,
      spans: spans
        .map((s) => ({
          spanID: s.spanId,
          startTimeUnixNano: s.startNs.toString(),
          durationNanos: s.durationNs.toString(),
          ...(shows.includes('name') ? { name: s.name } : {}),
          shown: Object.fromEntries(shows.filter((k) => k !== 'name' && shownValue(s, k) !== undefined).map((k) => [k, shownValue(s, k)])),
        }))
        .sort((a, b) => a.spanID.localeCompare(b.spanID)),
    }))
    .sort(byId);
  const spansOf = new Map(traces.flatMap((t) => t.spans.map((s) => [s.spanId, s] as const)));
  const actual = arr((body as Json | undefined)?.['traces'])
    .map((t) => {
      const sets = arr(t['spanSets']);
      if (sets.length !== 1) problems.push(`${String(t['traceID'])}: ${sets.length} spansets, expected 1`);
      const set = sets[0] ?? {};
      return {
        ...actualSummary(t),
        matched: set['matched'],
        spans: arr(set['spans'])
          .map((s) => {
            const id = String(s['spanID']);
            if (!/^[0-9a-f]{16}$/.test(id)) problems.push(`span id ${id} is not 16 lower-case hex digits`);
            const model = spansOf.get(id);
            const attributes = arr(s['attributes']);
            for (const a of attributes) {
              const key = String(a['key']);
              if (!allowed.has(key)) problems.push(`span ${id} shows ${key}, which the query does not name`);
              else if (model !== undefined && JSON.stringify(a['value']) !== JSON.stringify(shownValue(model, key))) {
                problems.push(`span ${id} shows ${key} = ${JSON.stringify(a['value'])}, the corpus has ${JSON.stringify(shownValue(model, key))}`);
              }
            }
            if (s['name'] !== undefined && model !== undefined && s['name'] !== model.name) problems.push(`span ${id} shows name ${JSON.stringify(s['name'])}`);
            return {
              spanID: id,
              startTimeUnixNano: s['startTimeUnixNano'],
              durationNanos: s['durationNanos'],
              ...(shows.includes('name') ? { name: s['name'] } : {}),
              shown: Object.fromEntries(attributes.filter((a) => shows.includes(String(a['key']))).map((a) => [String(a['key']), a['value']])),
            };
          })
          .sort((a, b) => a.spanID.localeCompare(b.spanID)),
      };
    })
    .sort(byId);
  if (JSON.stringify(actual) !== JSON.stringify(expected)) problems.push(`expected ${JSON.stringify(expected)}\n     got ${JSON.stringify(actual)}`);
  return problems;
}

/** Whether an answer is the row's expected answer; the problems found, none when it is. */
export function checkRow(row: ConformanceRow, traces: readonly ModelTrace[], status: number, body: unknown): string[] {
  if (status !== 200) return [`status ${status}, expected 200`];
  const e = row.expect;
  const answer = body as Json | undefined;
  const same = (expected: unknown, actual: unknown): string[] =>
    JSON.stringify(expected) === JSON.stringify(actual) ? [] : [`expected ${JSON.stringify(expected)}\n     got ${JSON.stringify(actual)}`];
  switch (e.kind) {
    case 'search':
      return checkSearch(row, traces, body, e.selects, e.shows ?? []);
    case 'limit': {
      // The newest traces first (by start), `limit` of them (docs/tempo.md: Tenantry's choice among the matches).
      const newest = selected(traces, e.selects)
        .map(({ trace }) => trace)
        .sort((a, b) => (b.startNs > a.startNs ? 1 : b.startNs < a.startNs ? -1 : 0))
        .slice(0, e.limit);
      return same(
        newest.map((t) => searchId(t.traceId)),
        arr(answer?.['traces']).map((t) => t['traceID']),
      );
    }
    case 'traces':
      return same(traces.filter(e.matches).map(summary).sort(byId), arr(answer?.['traces']).map(actualSummary).sort(byId));
    case 'values':
      return same(e.values(traces), canonicalValues(body));
    case 'tagNames':
      return same(e.names(traces), [...new Set((answer?.['tagNames'] as string[] | undefined) ?? [])].sort());
  }
}

const b64 = (hex: string): string => Buffer.from(hex, 'hex').toString('base64');
const keyValues = (attributes: Readonly<Record<string, string | number | boolean>>): Json[] =>
  Object.entries(attributes).map(([key, v]) => ({ key, value: otlpValue(v) }));

/** A trace as OTLP resource spans, from the corpus (OTLP JSON: ids base64, enums by name, 64-bit integers as strings). */
export function expectedTrace(t: ModelTrace): Json[] {
  return canonicalTrace(
    t.spans.map((s) => ({
      resource: { attributes: keyValues(s.resource) },
      scopeSpans: [
        {
          scope: { name: s.scope.name, version: s.scope.version },
          spans: [
            {
              traceId: b64(s.traceId),
              spanId: b64(s.spanId),
              ...(s.parentSpanId === undefined ? {} : { parentSpanId: b64(s.parentSpanId) }),
              name: s.name,
              kind: `SPAN_KIND_${s.kind.toUpperCase()}`,
              startTimeUnixNano: s.startNs.toString(),
              endTimeUnixNano: s.endNs.toString(),
              attributes: keyValues(s.attributes),
              status:
                s.status === 'unset' ? {} : { code: `STATUS_CODE_${s.status.toUpperCase()}`, ...(s.statusMessage === '' ? {} : { message: s.statusMessage }) },
            },
          ],
        },
      ],
    })),
  );
}
