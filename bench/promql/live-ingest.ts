// bench:promql's live ingest (BENCH_PROMQL_LIVE=1): while the queries are
// timed, every tenant's series keep arriving by remote write as a scrape
// would send them: each narrow tenant's 104 series one point every 15 s,
// each wide tenant's series one point every 60 s (in requests of 2,500
// series), the tenants' sends spread evenly over the interval, each point
// stamped with its scrape time (after the loaded data's last point, so the
// timed queries' answers, which end there, do not change). Every batch goes
// to each target: Tenantry under X-Scope-OrgID, and Prometheus (its remote
// write receiver) with the `tenant` label its loaded data has, so both
// systems answer the timed queries while ingesting the same samples.
// Bounded: it stops when told or after `maxMs`, and never holds more than
// `maxInFlight` requests per target (a send that would exceed it is skipped
// and counted).
import type { Layout } from './dataset.ts';
import { remoteWriteRequest, stepSeconds, tenantSeries, tenantName, wideSeries, wideStepSeconds } from './dataset.ts';

const wideChunk = 2500;
const maxInFlight = 8;

/** Where a live ingest sends: a remote write 1.0 URL, its headers for a tenant, and whether series carry a `tenant` label. */
export interface LiveTarget {
  readonly name: string;
  readonly url: string;
  headers(tenant: string): Record<string, string>;
  readonly tenantLabel: boolean;
}

/** What a live ingest sent to one target. */
export interface TargetStats {
  readonly name: string;
  readonly requests: number;
  readonly samples: number;
  readonly refused: number;
  readonly skipped: number;
}

/** What a live ingest sent, per target, and for how long. */
export interface LiveStats {
  readonly targets: readonly TargetStats[];
  readonly ms: number;
}

/** A live ingest under way. */
export interface LiveIngest {
  /** Stops sending, waits for the requests in flight, and says what was sent. */
  stop(): Promise<LiveStats>;
}

interface Stream {
  readonly tenant: number;
  readonly everyMs: number;
  /** Its first send, ms after the start (spread over the interval). */
  readonly offsetMs: number;
  readonly samples: number;
  /** The body for the scrape at point index `i` of the stream's step, with or without the `tenant` label. */
  body(i: number, tenantLabel: boolean): Buffer;
  readonly step: number;
  readonly firstSecond: number;
}

/** Starts sending every batch to each of `targets`. */
export function startLiveIngest(targets: readonly LiveTarget[], l: Layout, maxMs: number): LiveIngest {
  const narrow = tenantSeries();
  const wide = wideSeries(l.wideSeries);
  const streams: Stream[] = [];
  const narrowEvery = stepSeconds * 1000;
  for (let t = 0; t < l.tenants; t++) {
    streams.push({
      tenant: t,
      everyMs: narrowEvery,
      offsetMs: (t * narrowEvery) / l.tenants,
      samples: narrow.length,
      step: stepSeconds,
      firstSecond: l.firstSecond,
      body: (i, label) => remoteWriteRequest(t, narrow, i, i + 1, l.firstSecond, stepSeconds, label),
    });
  }
  const wideEvery = wideStepSeconds * 1000;
  const chunks = Math.ceil(wide.length / wideChunk);
  l.wideTenants.forEach((t, k) => {
    for (let c = 0; c < chunks; c++) {
      const part = wide.slice(c * wideChunk, (c + 1) * wideChunk);
      streams.push({
        tenant: t,
        everyMs: wideEvery,
        offsetMs: ((k * chunks + c) * wideEvery) / (l.wideTenants.length * chunks),
        samples: part.length,
        step: wideStepSeconds,
        firstSecond: l.wideFirstSecond,
        body: (i, label) => remoteWriteRequest(t, part, i, i + 1, l.wideFirstSecond, wideStepSeconds, label),
      });
    }
  });

  const started = Date.now();
  const sent = targets.map((target) => ({ target, requests: 0, samples: 0, refused: 0, skipped: 0, inFlight: new Set<Promise<void>>() }));
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;

  const send = (s: Stream): void => {
    if (stopped) return;
    // The scrape's time on the stream's grid: a point index past the loaded data (whose last point is a minute or more ago).
    const i = Math.floor((Date.now() / 1000 - s.firstSecond) / s.step);
    for (const t of sent) {
      if (t.inFlight.size >= maxInFlight) {
        t.skipped += 1;
        continue;
      }
      const headers = {
        ...t.target.headers(tenantName(s.tenant)),
        'content-type': 'application/x-protobuf',
        'content-encoding': 'snappy',
        'x-prometheus-remote-write-version': '0.1.0',
      };
      const p = fetch(t.target.url, { method: 'POST', body: s.body(i, t.target.tenantLabel), headers, signal: AbortSignal.timeout(30_000) })
        .then(async (res) => {
          await res.arrayBuffer();
          t.requests += 1;
          if (res.status === 200 || res.status === 204) t.samples += s.samples;
          else t.refused += 1;
        })
        .catch(() => {
          t.refused += 1;
        })
        .finally(() => {
          t.inFlight.delete(p);
        });
      t.inFlight.add(p);
    }
  };

  for (const s of streams) {
    const first = setTimeout(() => {
      timers.delete(first);
      send(s);
      const every = setInterval(() => {
        if (Date.now() - started > maxMs) {
          clearInterval(every);
          return;
        }
        send(s);
      }, s.everyMs);
      // Never what keeps the bench's process alive (a failed run ends without calling stop).
      every.unref();
      timers.add(every);
    }, s.offsetMs);
    first.unref();
    timers.add(first);
  }

  return {
    async stop(): Promise<LiveStats> {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      await Promise.all(sent.flatMap((t) => [...t.inFlight]));
      return {
        targets: sent.map(({ target, requests, samples, refused, skipped }) => ({ name: target.name, requests, samples, refused, skipped })),
        ms: Date.now() - started,
      };
    },
  };
}
