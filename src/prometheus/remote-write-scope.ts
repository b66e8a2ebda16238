// The instrumentation scope of every row Prometheus remote write stores.
// This is the contract with the PromQL API (api/compat/prometheus/): rows of
// this scope carry Prometheus names and labels as sent (docs/gateway.md,
// "Prometheus remote write"); every other metrics row is OTLP and gets the
// OpenTelemetry → Prometheus name translation when it is queried.

/** scope_name and scope_version of remote-written rows. */
export const remoteWriteScope = { name: 'tenantry.prometheus.remote_write', version: '1.0' } as const;

/** The resource attributes the `job` and `instance` labels become (and come back from). */
export const jobAttribute = 'service.name';
export const instanceAttribute = 'service.instance.id';

/**
 * The bits of Prometheus' staleness marker, a NaN that says "this series
 * ended here" (stored bit-exactly, so queries can tell it from a real NaN).
 */
export const staleMarkerBits = 0x7ff0000000000002n;
