// Connection metrics of every listener, labelled by listener name. Several
// listeners share one registry (target `all`), so the metrics are created
// once per registry and looked up after that.
import { Counter, Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

export interface ListenerMetrics {
  /** Connections open now. */
  readonly connections: Gauge<'listener'>;
  /** Connections closed at once because the listener was at its cap. */
  readonly refused: Counter<'listener'>;
  /** Requests cut off because their body (gRPC: message) did not arrive in time; Node's own headers timeout is not counted. */
  readonly bodyTimeouts: Counter<'listener'>;
}

const cache = new WeakMap<Registry, ListenerMetrics>();

/** The listener metrics of a registry, registered on first use. */
export function listenerMetrics(registry: Registry): ListenerMetrics {
  const known = cache.get(registry);
  if (known !== undefined) return known;
  const registers = [registry];
  const metrics: ListenerMetrics = {
    connections: new Gauge({ name: 'tenantry_listener_connections', help: 'Open client connections, by listener', labelNames: ['listener'], registers }),
    refused: new Counter({
      name: 'tenantry_listener_connections_refused_total',
      help: 'Connections closed on arrival because the listener had as many as its cap (TENANTRY_MAX_CONNECTIONS)',
      labelNames: ['listener'],
      registers,
    }),
    bodyTimeouts: new Counter({
      name: 'tenantry_listener_body_timeouts_total',
      help: 'Requests cut off because their body did not arrive within TENANTRY_BODY_TIMEOUT_MS',
      labelNames: ['listener'],
      registers,
    }),
  };
  cache.set(registry, metrics);
  return metrics;
}
