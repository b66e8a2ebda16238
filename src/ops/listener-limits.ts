// What one listener tolerates from its clients: how many connections it
// keeps open, how long a client may take to send its headers and then its
// body. The connection cap defaults to a share of the process's open-file
// limit, so that a flood on one port leaves descriptors for the others (and
// for ClickHouse, the write-ahead log and outgoing connections). And who may
// read its /metrics, which name tenants and volumes.
import { readFileSync } from 'node:fs';

export interface ListenerLimits {
  /** Open connections the listener keeps; a new one beyond it is closed at once. Undefined: derived from the open-file limit. */
  readonly maxConnections: number | undefined;
  /** Time from a connection's first byte of a request (or its opening) until the request's headers are complete. */
  readonly headersTimeoutMs: number;
  /** Time from the end of the headers until the end of the body. */
  readonly bodyTimeoutMs: number;
  /** The bearer key /metrics asks for (TENANTRY_METRICS_KEY); absent: /metrics is open (the port is reachable only inside the cluster). */
  readonly metricsKey?: string;
}

export const defaultListenerLimits: ListenerLimits = { maxConnections: undefined, headersTimeoutMs: 10_000, bodyTimeoutMs: 30_000 };

/** Descriptors kept out of every listener's share: ClickHouse parts, the write-ahead log, outgoing sockets, logs. */
export const reservedDescriptors = 1024;

/** Listeners that share the descriptors: at most three in one process (OTLP/HTTP, OTLP/gRPC, API), plus one share of headroom. */
const descriptorShares = 4;

/** The smallest derived cap, so a tiny limit still lets a port work. */
const minimumDerivedCap = 64;

/** The soft RLIMIT_NOFILE of this process, read from /proc (Linux); undefined where that is not available. */
export function openFileLimit(limitsFile = '/proc/self/limits'): number | undefined {
  let text: string;
  try {
    text = readFileSync(limitsFile, 'utf8');
  } catch {
    return undefined;
  }
  const soft = /^Max open files\s+(\S+)/m.exec(text)?.[1];
  if (soft === undefined) return undefined;
  if (soft === 'unlimited') return Number.MAX_SAFE_INTEGER;
  const n = Number(soft);
  return Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

/** The connection cap of one listener: the configured one, else an equal share of the descriptors left after the reserve. */
export function connectionCap(configured: number | undefined, openFiles: number | undefined = openFileLimit()): number {
  if (configured !== undefined) return configured;
  // Off Linux the limit is not readable here; 4096 is a modest guess (Node raises the soft limit to the hard one at start).
  const files = openFiles ?? 4096;
  return Math.max(minimumDerivedCap, Math.floor((files - reservedDescriptors) / descriptorShares));
}
