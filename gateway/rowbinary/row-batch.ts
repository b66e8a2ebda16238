// What converting one request produces: RowBinary rows for one table, the
// number of rows in them, and the rejected items. rowColumns is the order in
// which every converter writes a table's columns; the writer names them in
// its INSERT, and the types come from the table's definition.

export type TableName = 'spans' | 'logs' | 'metrics';

const resourceColumns = ['service_name', 'resource_schema_url', 'resource_attributes'] as const;

export const rowColumns: Readonly<Record<TableName, readonly string[]>> = {
  spans: [
    'tenant_id',
    'timestamp',
    'trace_id',
    'span_id',
    'parent_span_id',
    'trace_state',
    'flags',
    'span_name',
    'span_kind',
    'duration_ns',
    'status_code',
    'status_message',
    ...resourceColumns,
    'scope_name',
    'scope_version',
    'scope_attributes',
    'span_attributes',
    'event_timestamps',
    'event_names',
    'event_attributes',
    'link_trace_ids',
    'link_span_ids',
    'link_trace_states',
    'link_attributes',
    'dropped_attributes_count',
    'dropped_events_count',
    'dropped_links_count',
  ],
  logs: [
    'tenant_id',
    'timestamp',
    'observed_timestamp',
    'log_id',
    'trace_id',
    'span_id',
    'trace_flags',
    'severity_number',
    'severity_text',
    'event_name',
    'body',
    ...resourceColumns,
    'scope_name',
    'scope_version',
    'scope_schema_url',
    'scope_attributes',
    'log_attributes',
    'dropped_attributes_count',
  ],
  metrics: [
    'tenant_id',
    'metric_name',
    'metric_type',
    'description',
    'unit',
    'temporality',
    'is_monotonic',
    ...resourceColumns,
    'scope_name',
    'scope_version',
    'scope_attributes',
    'attributes',
    'start_timestamp',
    'timestamp',
    'flags',
    'value',
    'count',
    'sum',
    'min',
    'max',
    'bucket_counts',
    'explicit_bounds',
    'exp_scale',
    'exp_zero_count',
    'exp_zero_threshold',
    'exp_positive_offset',
    'exp_positive_bucket_counts',
    'exp_negative_offset',
    'exp_negative_bucket_counts',
    'quantiles',
    'quantile_values',
  ],
};

/** The items a converter rejected (gateway/convert/common/tenant-resolver.ts tallies them). */
export interface Rejections {
  readonly count: number;
  readonly byReason: ReadonlyMap<string, number>;
  /** The partial-success error message, naming `noun` (e.g. "spans"); '' when nothing was rejected. */
  message(noun: string): string;
}

export interface RowBatch {
  readonly table: TableName;
  /** RowBinary rows in the order of rowColumns[table]. */
  readonly rows: Buffer;
  readonly rowCount: number;
  readonly rejected: Rejections;
}
