// The scope name of rows the gateway's Prometheus remote write stores
// (gateway/prometheus/, issue 16): their metric name and labels are
// Prometheus' own. Defined here until the gateway exports its constant.

/** Rows with this scope_name were remote-written: metric_name as-is, labels = attributes + job/instance. */
export const remoteWriteScope = 'tenantry.prometheus.remote_write';
