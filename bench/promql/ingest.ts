// Writes bench:promql's samples to Tenantry by remote write 1.0: 8
// closed-loop clients, each request one tenant's narrow series for 120
// steps, or 150 of a wide tenant's series for all their steps. A request
// refused for load (429, 503) is sent again after a pause, at most 10 times.
import type { Layout } from './dataset.ts';
import { remoteWriteRequest, stepSeconds, tenantName, tenantSeries, widePoints, wideSeries, wideStepSeconds } from './dataset.ts';

const clients = 8;
const pointsPerRequest = 120;
const wideSeriesPerRequest = 150;
const attempts = 10;

/** One request: its tenant, its samples, and its body (built when sent). */
export interface PlannedRequest {
  readonly tenant: number;
  readonly samples: number;
  body(): Buffer;
}

/** Every request that writes the layout, wide tenants first. */
export function requestPlan(l: Layout): PlannedRequest[] {
  const plan: PlannedRequest[] = [];
  const wide = wideSeries(l.wideSeries);
  for (const t of l.wideTenants) {
    for (let from = 0; from < wide.length; from += wideSeriesPerRequest) {
      const chunk = wide.slice(from, from + wideSeriesPerRequest);
      plan.push({ tenant: t, samples: chunk.length * widePoints, body: () => remoteWriteRequest(t, chunk, 0, widePoints, l.wideFirstSecond, wideStepSeconds) });
    }
  }
  const narrow = tenantSeries();
  for (let from = 0; from < l.points; from += pointsPerRequest) {
    const to = Math.min(l.points, from + pointsPerRequest);
    for (let t = 0; t < l.tenants; t++) {
      plan.push({ tenant: t, samples: (to - from) * narrow.length, body: () => remoteWriteRequest(t, narrow, from, to, l.firstSecond, stepSeconds) });
    }
  }
  return plan;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function send(url: string, key: string, r: PlannedRequest): Promise<boolean> {
  const body = r.body();
  const headers = {
    authorization: `Bearer ${key}`,
    'x-scope-orgid': tenantName(r.tenant),
    'content-type': 'application/x-protobuf',
    'content-encoding': 'snappy',
    'x-prometheus-remote-write-version': '0.1.0',
  };
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const res = await fetch(url, { method: 'POST', body, headers, signal: AbortSignal.timeout(60_000) });
    await res.arrayBuffer();
    if (res.status === 200 || res.status === 204) return true;
    if (res.status !== 429 && res.status !== 503) return false;
    await sleep(200 * attempt);
  }
  return false;
}

/** Sends the plan; resolves with the samples acknowledged, the requests refused and the elapsed ms. */
export async function postRemoteWrite(url: string, key: string, plan: readonly PlannedRequest[]): Promise<{ samples: number; failed: number; ms: number }> {
  let next = 0;
  let samples = 0;
  let failed = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      for (let i = next++; i < plan.length; i = next++) {
        const r = plan[i];
        if (r === undefined) continue;
        if (await send(url, key, r)) samples += r.samples;
        else failed += 1;
      }
    }),
  );
  return { samples, failed, ms: performance.now() - started };
}
