// The contract with remote write (src/prometheus/remote-write-scope.ts): the
// scope name of remote-written rows, the resource attributes job and
// instance are stored in, and the stale marker's bits, as the SQL here uses
// them.
import { instanceAttribute, jobAttribute, remoteWriteScope as scope, staleMarkerBits } from '../../../src/prometheus/remote-write-scope.ts';

/** Rows with this scope_name were remote-written: metric_name as-is, labels = attributes + job/instance. */
export const remoteWriteScope: string = scope.name;

/** The resource attribute the `job` label comes from (remote write) or is derived from (OTLP). */
export const jobResourceAttribute: string = jobAttribute;

/** The resource attribute the `instance` label comes from. */
export const instanceResourceAttribute: string = instanceAttribute;

/** The stale marker's bits as a decimal UInt64 literal for SQL (a constant, not a user value). */
export const staleBitsLiteral: string = staleMarkerBits.toString();
