// /healthz, /readyz and /metrics, answered the same way on every HTTP port
// whatever framework serves it. Unauthenticated by design (probes, scrapers).
import type { Registry } from 'prom-client';
import type { Readiness } from './readiness.ts';

export interface OpsResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

export const opsPaths: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** The answer for an ops path, or undefined when the path is not one. */
export async function opsResponse(path: string, readiness: Readiness, registry: Registry): Promise<OpsResponse | undefined> {
  switch (path) {
    case '/healthz':
      return { status: 200, contentType: 'text/plain; charset=utf-8', body: 'ok\n' };
    case '/readyz':
      return readiness.isReady()
        ? { status: 200, contentType: 'text/plain; charset=utf-8', body: 'ready\n' }
        : { status: 503, contentType: 'text/plain; charset=utf-8', body: `not ready: ${readiness.reasons().join(', ')}\n` };
    case '/metrics':
      return { status: 200, contentType: registry.contentType, body: await registry.metrics() };
    default:
      return undefined;
  }
}
