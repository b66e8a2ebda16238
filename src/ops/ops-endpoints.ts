// /healthz, /readyz and /metrics, answered the same way on every HTTP port
// whatever framework serves it. Probes are unauthenticated by design; /metrics
// is too unless TENANTRY_METRICS_KEY is set (it names tenants and volumes, and
// a deployment may expose the ingest port outside the cluster): then it asks
// for that key as a bearer token, as Prometheus' `authorization` scrape
// setting sends it.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Registry } from 'prom-client';
import type { Readiness } from './readiness.ts';

export interface OpsResponse {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
}

export const opsPaths: ReadonlySet<string> = new Set(['/healthz', '/readyz', '/metrics']);

/** Whether an Authorization header carries `key` as a bearer token (compared in constant time); any request when no key is set. */
export function metricsAllowed(key: string | undefined, authorization: string | undefined): boolean {
  if (key === undefined) return true;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (match?.[1] === undefined) return false;
  const digest = (text: string): Buffer => createHash('sha256').update(text).digest();
  return timingSafeEqual(digest(match[1]), digest(key));
}

const refused: OpsResponse = {
  status: 401,
  contentType: 'text/plain; charset=utf-8',
  body: 'unauthorized: /metrics needs "Authorization: Bearer <TENANTRY_METRICS_KEY>"\n',
};

/** The answer for an ops path, or undefined when the path is not one; `metricsKey` and `authorization`: who may read /metrics. */
export async function opsResponse(
  path: string,
  readiness: Readiness,
  registry: Registry,
  metricsKey?: string,
  authorization?: string,
): Promise<OpsResponse | undefined> {
  switch (path) {
    case '/healthz':
      return { status: 200, contentType: 'text/plain; charset=utf-8', body: 'ok\n' };
    case '/readyz':
      return readiness.isReady()
        ? { status: 200, contentType: 'text/plain; charset=utf-8', body: 'ready\n' }
        : { status: 503, contentType: 'text/plain; charset=utf-8', body: `not ready: ${readiness.reasons().join(', ')}\n` };
    case '/metrics':
      if (!metricsAllowed(metricsKey, authorization)) return refused;
      return { status: 200, contentType: registry.contentType, body: await registry.metrics() };
    default:
      return undefined;
  }
}
