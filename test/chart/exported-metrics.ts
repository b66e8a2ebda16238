// The metric names Tenantry's processes export, and the metric names a PromQL
// expression reads, so the chart's alerts and dashboards can be checked
// against the code: a rule or panel naming a metric no component exports
// would silently show nothing.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { processRegistry } from '../../src/target/stop-signal.ts';

type MetricType = 'counter' | 'gauge' | 'histogram' | 'summary';

/** Folders holding the code of the gateway, API, operator and shared process parts. */
const codeFolders = ['src', 'gateway', 'api', 'operator'];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(path);
    return e.isFile() && e.name.endsWith('.ts') ? [path] : [];
  });
}

const typeOfClass: Record<string, MetricType> = { Counter: 'counter', Gauge: 'gauge', Histogram: 'histogram', Summary: 'summary' };

/**
 * Every `new Counter|Gauge|Histogram|Summary({ name: ... })` in the code, the
 * name a string literal or a const of the same file. Reading the registration
 * code finds metrics that only exist once a component runs (the operator's
 * controller, the leader gauge) without starting a cluster.
 */
export function registeredMetrics(root: string): Map<string, MetricType> {
  const found = new Map<string, MetricType>();
  for (const file of codeFolders.flatMap((d) => tsFiles(join(root, d)))) {
    const text = readFileSync(file, 'utf8');
    if (!text.includes("from 'prom-client'")) continue;
    const consts = new Map([...text.matchAll(/const (\w+) = '([a-z_:][a-z0-9_:]*)'/g)].map((m) => [m[1] ?? '', m[2] ?? '']));
    for (const m of text.matchAll(/new (Counter|Gauge|Histogram|Summary)\(\{\s*name: (?:'([a-z_:][a-z0-9_:]*)'|(\w+))/g)) {
      const name = m[2] ?? consts.get(m[3] ?? '');
      if (name === undefined) throw new Error(`${file}: metric name ${m[3] ?? '?'} is neither a literal nor a const of the file`);
      found.set(name, typeOfClass[m[1] ?? ''] ?? 'gauge');
    }
  }
  return found;
}

/** Node's default metrics as every process registers them (prefix tenantry_). */
export async function processMetrics(): Promise<Map<string, MetricType>> {
  const metrics = await processRegistry().getMetricsAsJSON();
  return new Map(metrics.map((m) => [m.name, String(m.type) as MetricType]));
}

/** The series names a scrape shows: histograms and summaries add _bucket, _sum and _count. */
export function seriesNames(metrics: ReadonlyMap<string, MetricType>): Set<string> {
  const names = new Set<string>();
  for (const [name, type] of metrics) {
    names.add(name);
    if (type === 'histogram') for (const s of ['_bucket', '_sum', '_count']) names.add(name + s);
    if (type === 'summary') for (const s of ['_sum', '_count']) names.add(name + s);
  }
  return names;
}

/** Every series name Tenantry exports. */
export async function exportedSeriesNames(root: string): Promise<Set<string>> {
  return seriesNames(new Map([...registeredMetrics(root), ...(await processMetrics())]));
}

/** Grafana's interval variables stand where PromQL wants a duration. */
const grafanaDurations = /\$__(rate_interval|interval|range)\b|\$\{__(rate_interval|interval|range)\}/g;

/** The metric names an expression selects; throws on an expression PromQL's grammar rejects. */
export function metricNamesIn(expr: string): string[] {
  const text = expr.replace(grafanaDurations, '5m');
  const names: string[] = [];
  let error: number | undefined;
  parser.parse(text).iterate({
    enter(node) {
      if (node.type.isError) error ??= node.from;
      if (node.name === 'Identifier' && node.node.parent?.name === 'VectorSelector') names.push(text.slice(node.from, node.to));
    },
  });
  if (error !== undefined) throw new Error(`not valid PromQL at ${error}: ${expr}`);
  return names;
}

export interface DashboardExpr {
  readonly dashboard: string;
  readonly panel: string;
  readonly expr: string;
}

/** Every PromQL expression of a Grafana dashboard: panel targets and query variables. */
export function dashboardExprs(file: string): DashboardExpr[] {
  type Panel = { title?: string; targets?: Array<{ expr?: string }>; panels?: Panel[] };
  const d = JSON.parse(readFileSync(file, 'utf8')) as {
    title: string;
    panels: Panel[];
    templating?: { list: Array<{ name: string; type: string; query?: { query?: string } | string }> };
  };
  const panels = (list: Panel[]): Panel[] => list.flatMap((p) => [p, ...panels(p.panels ?? [])]);
  const out: DashboardExpr[] = panels(d.panels).flatMap((p) =>
    (p.targets ?? []).flatMap((t) => (t.expr === undefined ? [] : [{ dashboard: d.title, panel: p.title ?? '?', expr: t.expr }])),
  );
  for (const v of d.templating?.list ?? []) {
    if (v.type !== 'query') continue;
    const q = typeof v.query === 'string' ? v.query : (v.query?.query ?? '');
    // label_values(<selector>, label): the selector is the PromQL part.
    const selector = /^label_values\((.*),\s*\w+\)$/.exec(q)?.[1];
    if (selector !== undefined) out.push({ dashboard: d.title, panel: `variable ${v.name}`, expr: selector });
  }
  return out;
}
