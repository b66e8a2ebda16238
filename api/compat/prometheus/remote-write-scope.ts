// The scope name of rows the gateway's Prometheus remote write stores: their
// metric name and labels are Prometheus' own, job and instance in the
// resource's service.name and service.instance.id. The gateway defines it
// (gateway/prometheus/remote-write-scope.ts); the API may not import another
// deployable, so it is repeated here and a unit test holds the two equal.

/** Rows with this scope_name were remote-written: metric_name as-is, labels = attributes + job/instance. */
export const remoteWriteScope = 'tenantry.prometheus.remote_write';
