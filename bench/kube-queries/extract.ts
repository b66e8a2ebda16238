// Every PromQL expression of kube-prometheus-stack's dashboards and rules,
// read from a chart folder the user points to (nothing of the chart is kept
// in this repository): dashboards are ConfigMaps holding one Grafana JSON
// document each (panel targets' `expr`, query variables' `label_values(…)` and
// `query_result(…)`), rules are PrometheusRule templates (`expr` of alerting
// and recording rules). Each template is rendered with the chart's defaults
// (helm-render.ts); an expression still holding a template action is listed
// as not extracted.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { renderDashboardLine, renderRuleFile, unrendered } from './helm-render.ts';
import type { ValueLookup } from './helm-render.ts';

/** Where a query comes from: a panel, a dashboard variable, or a rule. */
export type QuerySource = 'dashboard' | 'variable' | 'rule';

/** One expression as the chart holds it, after Helm rendering. */
export interface ChartQuery {
  readonly source: QuerySource;
  /** The template's file name. */
  readonly file: string;
  /** Panel title, variable name, or alert / record name. */
  readonly where: string;
  readonly expr: string;
}

/** An expression (or a whole file) this extraction could not turn into a query. */
export interface Unextracted {
  readonly file: string;
  readonly where: string;
  readonly why: string;
}

/** A dashboard's query variable, as Grafana's templating list defines it. */
export interface VariableDef {
  readonly name: string;
  readonly query: string;
  readonly includeAll: boolean;
  readonly allValue?: string;
  /** The saved selection: a value, `$__all`, or undefined when none is saved. */
  readonly current?: string;
}

export interface Extraction {
  readonly queries: readonly ChartQuery[];
  readonly unextracted: readonly Unextracted[];
  /** Each dashboard file's query variables, in templating order (later ones may use earlier ones). */
  readonly variables: ReadonlyMap<string, readonly VariableDef[]>;
}

export const dashboardsDir = 'charts/kube-prometheus-stack/templates/grafana/dashboards-1.14';
export const rulesDir = 'charts/kube-prometheus-stack/templates/prometheus/rules-1.14';
const valuesFile = 'charts/kube-prometheus-stack/values.yaml';

/** The chart's own defaults (values.yaml, when the folder holds it) by dotted path. */
function chartValues(chartRoot: string): ValueLookup {
  const file = join(chartRoot, valuesFile);
  const values: unknown = existsSync(file) ? parse(readFileSync(file, 'utf8')) : {};
  return (path) => {
    let at: unknown = values;
    for (const key of path.split('.')) at = isRecord(at) ? at[key] : undefined;
    return typeof at === 'string' || typeof at === 'number' || typeof at === 'boolean' ? String(at) : undefined;
  };
}

const yamlFiles = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort();

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const recordsOf = (v: unknown): Record<string, unknown>[] => (Array.isArray(v) ? v.filter(isRecord) : []);
const textOf = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Panels at any depth: a row's collapsed panels, and the old `rows[].panels` layout. */
function panelsOf(dashboard: Record<string, unknown>): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const walk = (panels: unknown): void => {
    for (const p of recordsOf(panels)) {
      out.push(p);
      walk(p['panels']);
    }
  };
  walk(dashboard['panels']);
  for (const row of recordsOf(dashboard['rows'])) walk(row['panels']);
  return out;
}

/** The saved selection's value ('' and missing mean none). */
function currentOf(v: Record<string, unknown>): string | undefined {
  const current = isRecord(v['current']) ? v['current']['value'] : undefined;
  const value: unknown = Array.isArray(current) ? current[0] : current;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

function variableDef(v: Record<string, unknown>): VariableDef {
  const q = v['query'];
  const allValue = textOf(v['allValue']);
  const current = currentOf(v);
  return {
    name: textOf(v['name']),
    query: isRecord(q) ? textOf(q['query']) : textOf(q),
    includeAll: v['includeAll'] === true,
    ...(allValue === '' ? {} : { allValue }),
    ...(current === undefined ? {} : { current }),
  };
}

function dashboardQueries(
  file: string,
  dashboard: Record<string, unknown>,
  found: ChartQuery[],
  lost: Unextracted[],
  variables: Map<string, VariableDef[]>,
): void {
  const add = (source: QuerySource, where: string, expr: string): void => {
    if (expr.trim() === '') return;
    if (expr.includes(unrendered)) lost.push({ file, where, why: `template action left: ${expr.slice(0, 120)}` });
    else found.push({ source, file, where, expr });
  };
  for (const panel of panelsOf(dashboard)) {
    for (const target of recordsOf(panel['targets'])) add('dashboard', textOf(panel['title']), textOf(target['expr']));
  }
  const templating = isRecord(dashboard['templating']) ? dashboard['templating'] : {};
  for (const v of recordsOf(templating['list'])) {
    if (v['type'] !== 'query') continue;
    const def = variableDef(v);
    variables.set(file, [...(variables.get(file) ?? []), def]);
    add('variable', `$${def.name}`, def.query);
  }
}

function readDashboards(dir: string, found: ChartQuery[], lost: Unextracted[], variables: Map<string, VariableDef[]>): void {
  for (const file of yamlFiles(dir)) {
    const lines = readFileSync(join(dir, file), 'utf8').split('\n');
    lines.forEach((line, i) => {
      if (!/^\s+[\w.-]+\.json: \|-?\s*$/.test(line)) return;
      const rendered = renderDashboardLine(lines[i + 1] ?? '');
      try {
        const dashboard: unknown = JSON.parse(rendered);
        if (isRecord(dashboard)) dashboardQueries(file, dashboard, found, lost, variables);
      } catch (e) {
        lost.push({ file, where: line.trim(), why: `dashboard JSON unparsable after rendering: ${String(e).slice(0, 200)}` });
      }
    });
  }
}

function readRules(dir: string, values: ValueLookup, found: ChartQuery[], lost: Unextracted[]): void {
  for (const file of yamlFiles(dir)) {
    const docs = parseAllDocuments(renderRuleFile(readFileSync(join(dir, file), 'utf8'), values));
    for (const doc of Array.isArray(docs) ? docs : [docs]) {
      if (doc.errors.length > 0) {
        lost.push({ file, where: 'file', why: `YAML unparsable after rendering: ${doc.errors[0]?.message.slice(0, 200) ?? ''}` });
        continue;
      }
      const spec: unknown = doc.toJS();
      const groups = isRecord(spec) && isRecord(spec['spec']) ? spec['spec']['groups'] : [];
      for (const group of recordsOf(groups)) {
        for (const rule of recordsOf(group['rules'])) {
          const where = textOf(rule['alert']) || textOf(rule['record']);
          const expr = typeof rule['expr'] === 'number' ? String(rule['expr']) : textOf(rule['expr']);
          if (expr.includes(unrendered)) lost.push({ file, where, why: `template action left: ${expr.slice(0, 120)}` });
          else if (expr.trim() !== '') found.push({ source: 'rule', file, where, expr });
        }
      }
    }
  }
}

/** Every query of the chart folder's dashboards and rules, in file order. */
export function extractChartQueries(chartRoot: string): Extraction {
  const queries: ChartQuery[] = [];
  const unextracted: Unextracted[] = [];
  const variables = new Map<string, VariableDef[]>();
  readDashboards(join(chartRoot, dashboardsDir), queries, unextracted, variables);
  readRules(join(chartRoot, rulesDir), chartValues(chartRoot), queries, unextracted);
  return { queries, unextracted, variables };
}
