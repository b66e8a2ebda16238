// How a stored log row looks to LogQL: Loki 3's default OTLP mapping
// (pkg/loghttp/push/otlp.go and otlp_config.go of v3.7.8, docs/loki.md),
// as ClickHouse expressions over the logs table's columns. Stream labels are
// a fixed list of resource attributes with their names sanitised; every
// other attribute, and the record's own fields, are structured metadata.

/** Resource attributes Loki indexes as stream labels by default (distributor.otlp.default_resource_attributes_as_index_labels). */
export const streamAttributes: readonly string[] = [
  'service.name',
  'service.namespace',
  'service.instance.id',
  'deployment.environment',
  'deployment.environment.name',
  'cloud.region',
  'cloud.availability_zone',
  'k8s.cluster.name',
  'k8s.namespace.name',
  'k8s.pod.name',
  'k8s.container.name',
  'container.name',
  'k8s.replicaset.name',
  'k8s.deployment.name',
  'k8s.statefulset.name',
  'k8s.daemonset.name',
  'k8s.cronjob.name',
  'k8s.job.name',
];

/**
 * A Prometheus label name of an attribute key, as Loki's otlptranslator
 * LabelNamer builds it: characters outside [a-zA-Z0-9_] become `_`, runs of
 * `_` collapse into one (so any run of non-alphanumerics is one `_`), and a
 * leading digit gets `key_`.
 */
export function labelName(key: string): string {
  const name = key.replace(/[^a-zA-Z0-9]+/g, (run) => (run === '_' ? run : '_'));
  return /^[0-9]/.test(name) ? `key_${name}` : name;
}

/** The same in SQL over the String expression `key`: one regex replacement per key. */
function labelNameSql(key: string): string {
  return `concat(if(substring(${key}, 1, 1) BETWEEN '0' AND '9', 'key_', ''), replaceRegexpAll(${key}, '[^a-zA-Z0-9]+', '_'))`;
}

/** A map with its keys sanitised into label names. */
function sanitisedMap(map: string): string {
  return `mapApply((k, v) -> (${labelNameSql('k')}, v), ${map})`;
}

/** Loki's service name when the resource has none (discover_service_name finds nothing in OTLP resources). */
export const unknownService = 'unknown_service';

const streamNames = streamAttributes.map(labelName);

/** The label names that are stream labels (what /labels, /label/…/values and /series list). */
export const streamLabelNames: readonly string[] = streamNames;

/** The stream labels of a row as a Map(String, String) (empty values dropped, as Loki drops them). */
export function streamLabelsSql(): string {
  const pairs = streamAttributes.flatMap((attr, i) => {
    const value = attr === 'service.name' ? `if(service_name = '', '${unknownService}', service_name)` : `resource_attributes['${attr}']`;
    return [`'${streamNames[i] ?? ''}'`, value];
  });
  return `mapFilter((k, v) -> v != '', map(${pairs.join(', ')}))`;
}

/** The expression of one stream label (for selectors: cheaper than building the whole map). */
export function streamLabelSql(name: string): string | undefined {
  const i = streamNames.indexOf(name);
  if (i < 0) return undefined;
  if (name === 'service_name') return `if(service_name = '', '${unknownService}', service_name)`;
  return `resource_attributes['${streamAttributes[i] ?? ''}']`;
}

/** Loki's detected_level from an OTLP severity number (distributor field detection). */
const detectedLevel = `multiIf(severity_number = 0, 'unknown', severity_number <= 4, 'trace', severity_number <= 8, 'debug', severity_number <= 12, 'info',
  severity_number <= 16, 'warn', severity_number <= 20, 'error', severity_number <= 24, 'fatal', 'unknown')`;

/** The record fields Loki stores as structured metadata, each as an expression (empty: absent). */
const fieldSql: Readonly<Record<string, string>> = {
  observed_timestamp: "if(toUnixTimestamp64Nano(observed_timestamp) = 0, '', toString(toUnixTimestamp64Nano(observed_timestamp)))",
  severity_number: "if(severity_number = 0, '', toString(severity_number))",
  severity_text: 'severity_text',
  flags: "if(trace_flags = 0, '', toString(trace_flags))",
  trace_id: 'trace_id',
  span_id: 'span_id',
  scope_name: 'scope_name',
  scope_version: 'scope_version',
  detected_level: detectedLevel,
};

/**
 * One label of a row before any parser, without building the row's label
 * maps: a stream label or record field directly; a name without `_` can only
 * come from an attribute key equal to it (sanitising turns every other
 * character into `_`), so a map lookup; any other name goes through the
 * whole map (`fullMap`). `bound` is the name as a bound parameter.
 */
export function labelLookupSql(name: string, bound: string, fullMap: string): string {
  const stream = streamLabelSql(name);
  const field = fieldSql[name];
  if (field !== undefined) return field;
  if (stream !== undefined) return stream;
  if (name.includes('_') || /^[0-9]/.test(name)) return `${fullMap}[${bound}]`;
  const quoted = streamAttributes.map((a) => `'${a}'`).join(', ');
  // mapConcat's precedence in metadataSql: scope attributes over resource attributes over log attributes.
  return `multiIf(mapContains(scope_attributes, ${bound}), scope_attributes[${bound}],
    mapContains(resource_attributes, ${bound}) AND ${bound} NOT IN (${quoted}), resource_attributes[${bound}], log_attributes[${bound}])`;
}

/** The structured metadata of a row as a Map(String, String): the other resource attributes, scope and record fields, log attributes. */
export function metadataSql(): string {
  const quoted = streamAttributes.map((a) => `'${a}'`).join(', ');
  const fields = `map(${Object.entries(fieldSql)
    .map(([k, v]) => `'${k}', ${v}`)
    .join(', ')})`;
  const resource = sanitisedMap(`mapFilter((k, v) -> k NOT IN (${quoted}), resource_attributes)`);
  return `mapFilter((k, v) -> v != '', mapConcat(${sanitisedMap('log_attributes')}, ${fields}, ${resource}, ${sanitisedMap('scope_attributes')}))`;
}

/** Keys and values of a JSON object body, nested objects flattened with `_` (three levels), arrays skipped, strings unquoted. */
function jsonPairs(raw: string, prefix: string, depth: number): string {
  const kv = `kv${depth}`;
  const empty = "CAST([], 'Array(Tuple(String, String))')";
  const value = `multiIf(startsWith(${kv}.2, '"'), JSONExtractString(concat('[', ${kv}.2, ']'), 1), ${kv}.2 = 'null', '', ${kv}.2)`;
  const leaf = `[(concat(${prefix}, ${kv}.1), ${value})]`;
  const nested = depth <= 1 ? empty : jsonPairs(`${kv}.2`, `concat(${prefix}, ${kv}.1, '_')`, depth - 1);
  return `arrayFlatten(arrayMap(${kv} -> if(startsWith(${kv}.2, '['), ${empty}, if(startsWith(${kv}.2, '{'), ${nested}, ${leaf})), JSONExtractKeysAndValuesRaw(${raw})))`;
}

/** The labels `| json` extracts from the body, keys sanitised. */
export function jsonLabelsSql(): string {
  return sanitisedMap(`CAST(${jsonPairs('body', "''", 3)}, 'Map(String, String)')`);
}

/** The labels `| logfmt` extracts from the body, keys sanitised. */
export function logfmtLabelsSql(): string {
  return sanitisedMap(`CAST(extractKeyValuePairs(body, '=', ' ', '"'), 'Map(String, String)')`);
}

/** Parsed labels merged into `labels`: a key that is already a label becomes `<key>_extracted`, as Loki renames it. */
export function mergeParsedSql(labels: string, parsed: string): string {
  return `mapConcat(${labels}, mapApply((k, v) -> (if(mapContains(${labels}, k), concat(k, '_extracted'), k), v), ${parsed}))`;
}
