// The least Helm rendering that keeps kube-prometheus-stack's PromQL: the
// chart's defaults for the few placeholders its queries hold (job names,
// namespaces, the filesystem selector, an empty extra aggregation label
// list, multicluster off), lines that are only template actions dropped (the
// chart's `{{- if }}`/`{{- with }}`/`{{- end }}` blocks wrap whole rules and
// annotations, never part of an expression). Whatever placeholder is left is
// replaced by a marker, so a query that still holds one is counted as not
// extracted instead of being asked wrongly.

/** Marks a template action this rendering does not know. */
export const unrendered = '__helm_unrendered__';

/** Job and namespace names the chart's defaults give (release name `kube-prometheus-stack`). */
const placeholders: Readonly<Record<string, string>> = {
  $kubeStateMetricsJob: 'kube-state-metrics',
  $kubeletJob: 'kubelet',
  $kubeApiserverJob: 'apiserver',
  $kubeSchedulerJob: 'kube-scheduler',
  $kubeControllerManagerJob: 'kube-controller-manager',
  $kubeProxyJob: 'kube-proxy',
  $prometheusJob: 'kube-prometheus-stack-prometheus',
  $alertmanagerJob: 'kube-prometheus-stack-alertmanager',
  $operatorJob: 'kube-prometheus-stack-operator',
  $namespace: 'monitoring',
  $targetNamespace: '.*',
  $namespaceOperator: '=~',
  '$.Values.defaultRules.node.fsSelector': 'fstype!=""',
  '.Values.grafana.defaultDashboardsEditable': 'true',
  '.Values.grafana.defaultDashboardsInterval': '1m',
  '.Values.grafana.defaultDashboardsTimezone': 'utc',
};

/** `{{ if <multicluster…> }}A{{ else }}B{{ end }}`: multicluster is off by default, so B. */
const ifElse = /\{\{-? if [^}]*\}\}([\s\S]*?)\{\{-? else -?\}\}([\s\S]*?)\{\{-? end -?\}\}/g;
/** The extra aggregation labels, an empty list by default. */
const aggregationLabels = /\{\{ range \$\.Values\.defaultRules\.additionalAggregationLabels \}\}\{\{ \. \}\},\{\{ end \}\}/g;
/** `{{ dig "Rule" "for" "10m" .Values.customRules }}`: the default, the last string. */
const dig = /\{\{ dig "[^"]*" "[^"]*" "([^"]*)" \.Values\.customRules \}\}/g;
const action = /\{\{-?\s*([^{}]*?)\s*-?\}\}/g;

/** A chart value by its dotted path (`.Values.a.b`), when it is a scalar. */
export type ValueLookup = (path: string) => string | undefined;

const noValues: ValueLookup = () => undefined;

/** Template text outside raw strings rendered with the defaults; unknown actions become the marker. */
export function renderActions(text: string, values: ValueLookup = noValues): string {
  return text
    .replace(ifElse, (_m, _a: string, b: string) => b)
    .replace(aggregationLabels, '')
    .replace(dig, (_m, d: string) => d)
    .replace(action, (_m, inner: string) => {
      const path = /^\$?\.Values\.([\w.]+)$/.exec(inner)?.[1];
      return placeholders[inner] ?? (path === undefined ? undefined : values(path)) ?? unrendered;
    });
}

/** A line holding nothing but template actions (no raw string): a block boundary or an include. */
const actionsOnly = /^\s*(\{\{-?[^`{}]*-?\}\}\s*)+$/;

/** A PrometheusRule template rendered as plain YAML (alert descriptions keep their `{{ $labels }}`). */
export function renderRuleFile(text: string, values: ValueLookup = noValues): string {
  return text
    .replace(/\{\{-? *\/\*[\s\S]*?\*\/ *-?\}\}/g, '')
    .split('\n')
    .filter((line) => !actionsOnly.test(line))
    .map((line) => {
      const escapes: string[] = [];
      // `{{`{{`}}` is Helm's escape for a literal `{{`: keep those out of the rendering.
      const kept = line.replace(/\{\{`(\{\{|\}\})`\}\}/g, (_m, brace: string) => {
        escapes.push(brace);
        return `\uE000${escapes.length - 1}\uE001`;
      });
      return renderActions(kept, values).replace(/\uE000(\d+)\uE001/g, (_m, i: string) => escapes[Number(i)] ?? '');
    })
    .join('\n');
}

/** A dashboard's one-line template (raw strings between actions) rendered as the JSON it holds. */
export function renderDashboardLine(line: string): string {
  // Go raw strings hold no backtick: split into outside (even) and raw (odd) parts.
  return line
    .trim()
    .split(/\{\{`|`\}\}/)
    .map((part, i) => (i % 2 === 1 ? part : renderActions(part)))
    .join('');
}
