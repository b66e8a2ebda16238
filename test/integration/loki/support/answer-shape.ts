// How the conformance test compares Tenantry's answer with the expected one:
// both reduced to what the documentation fixes (label sets, lines in order,
// sample values by timestamp), with streams and series in a canonical order,
// since the Loki API promises no order among them.

export interface LokiAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly text: string;
}

type Labels = Record<string, string>;
interface StreamResult {
  stream: Labels;
  values: ([string, string] | [string, string, Record<string, Labels>])[];
}
interface MatrixResult {
  metric: Labels;
  values: [number, string][];
}
interface VectorResult {
  metric: Labels;
  value: [number, string];
}

const key = (labels: Labels): string => JSON.stringify(Object.entries(labels).sort(([a], [b]) => a.localeCompare(b)));

function dataOf(answer: LokiAnswer): { resultType?: string; result?: unknown } {
  const body = answer.body as { data?: { resultType?: string; result?: unknown } } | undefined;
  return body?.data ?? {};
}

/** A streams answer: every entry as "ts line {labels}" in the answer's overall order (by time, direction kept), then per-stream counts. */
function streams(answer: LokiAnswer, direction: 'forward' | 'backward'): unknown {
  const result = (dataOf(answer).result ?? []) as StreamResult[];
  // A categorized entry's third element: structured metadata and parsed labels, each in canonical order.
  const extra = (e: Record<string, Labels> | undefined): string =>
    e === undefined
      ? ''
      : ` ${JSON.stringify(
          Object.entries(e)
            .sort(([a], [b]) => a.localeCompare(b))
            .map(([k, v]) => [k, key(v)]),
        )}`;
  const entries = result.flatMap((s) => s.values.map(([ts, line, more]) => ({ ts, line, labels: `${key(s.stream)}${extra(more)}` })));
  // Equal timestamps have no defined order across streams: order by time, then line, then labels.
  const sign = direction === 'forward' ? 1 : -1;
  entries.sort((a, b) =>
    a.ts === b.ts ? (a.line === b.line ? a.labels.localeCompare(b.labels) : a.line.localeCompare(b.line)) : sign * (BigInt(a.ts) < BigInt(b.ts) ? -1 : 1),
  );
  return {
    resultType: 'streams',
    encodingFlags: (answer.body as { data?: { encodingFlags?: unknown } }).data?.encodingFlags,
    streams: result.length,
    entries: entries.map((e) => `${e.ts} ${e.line} ${e.labels}`),
  };
}

/**
 * A sample value to 12 significant digits: sums of many float rates differ
 * in the last bits with the order of summation, which the API does not fix
 * (docs/loki.md, "Conformance").
 */
const value = (v: string): string => (/^-?[\d.]+(e[-+]?\d+)?$/.test(v) ? String(Number(Number(v).toPrecision(12))) : v);

function matrix(answer: LokiAnswer): unknown {
  const result = (dataOf(answer).result ?? []) as MatrixResult[];
  return { resultType: 'matrix', series: result.map((s) => `${key(s.metric)} ${s.values.map(([t, v]) => `${t}=${value(v)}`).join(' ')}`).sort() };
}

function vector(answer: LokiAnswer): unknown {
  const result = (dataOf(answer).result ?? []) as VectorResult[];
  return { resultType: 'vector', samples: result.map((s) => `${key(s.metric)} ${s.value[0]}=${value(s.value[1])}`).sort() };
}

/** The comparable form of an answer: its status and result, or its error text for a non-200. */
export function canonical(answer: LokiAnswer, direction: 'forward' | 'backward' = 'backward'): unknown {
  if (answer.status !== 200) return { status: answer.status, error: answer.text.trim() };
  const type = dataOf(answer).resultType;
  if (type === 'streams') return streams(answer, direction);
  if (type === 'matrix') return matrix(answer);
  if (type === 'vector') return vector(answer);
  if (type === 'scalar') return { resultType: 'scalar', value: dataOf(answer).result };
  return { status: answer.status, body: answer.body };
}

/** Size of an answer, for the printed table. */
export function summary(answer: LokiAnswer): string {
  if (answer.status !== 200) return `${answer.status}`;
  const data = dataOf(answer);
  const result = (data.result ?? []) as unknown[];
  if (data.resultType === 'streams') return `${result.length} streams, ${(result as StreamResult[]).reduce((n, s) => n + s.values.length, 0)} lines`;
  if (data.resultType === 'matrix') return `${result.length} series, ${(result as MatrixResult[]).reduce((n, s) => n + s.values.length, 0)} points`;
  return `${result.length} samples`;
}
