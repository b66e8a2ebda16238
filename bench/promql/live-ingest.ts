// bench:promql's live ingest (BENCH_PROMQL_LIVE=1): while the queries are
// timed, every tenant's series keep arriving by remote write as a scrape
// would send them: each narrow tenant's 104 series one point every 15 s,
// each wide tenant's series one point every 60 s (in requests of 2,500
// series), the tenants' sends spread evenly over the interval, each point
// stamped with its scrape time (after the loaded data's last point, so the
// timed queries' answers, which end there, do not change). Bounded: it stops
// when told or after `maxMs`, and never holds more than `maxInFlight`
// requests (a send that would exceed it is skipped and counted).
import type { Layout } from './dataset.ts';
import { remoteWriteRequest, stepSeconds, tenantSeries, tenantName, wideSeries, wideStepSeconds } from './dataset.ts';

const wideChunk = 2500;
const maxInFlight = 8;

/** What a live ingest sent. */
export interface LiveStats {
  readonly requests: number;
  readonly samples: number;
  readonly refused: number;
  readonly skipped: number;
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
  /** The body for the scrape at `second` (a point index of the stream's step). */
  body(second: number): Buffer;
  readonly step: number;
  readonly firstSecond: number;
}

/** Starts sending; `url` is the gateway's `/api/v1/push`. */
export function startLiveIngest(url: string, key: string, l: Layout, maxMs: number): LiveIngest {
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
      body: (i) => remoteWriteRequest(t, narrow, i, i + 1, l.firstSecond, stepSeconds),
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
        body: (i) => remoteWriteRequest(t, part, i, i + 1, l.wideFirstSecond, wideStepSeconds),
      });
    }
  });

  const started = Date.now();
  const stats = { requests: 0, samples: 0, refused: 0, skipped: 0 };
  const inFlight = new Set<Promise<void>>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;

  const send = (s: Stream): void => {
    if (stopped) return;
    if (inFlight.size >= maxInFlight) {
      stats.skipped += 1;
      return;
    }
    // The scrape's time on the stream's grid: a point index past the loaded data (whose last point is a minute or more ago).
    const i = Math.floor((Date.now() / 1000 - s.firstSecond) / s.step);
    const headers = {
      authorization: `Bearer ${key}`,
      'x-scope-orgid': tenantName(s.tenant),
      'content-type': 'application/x-protobuf',
      'content-encoding': 'snappy',
      'x-prometheus-remote-write-version': '0.1.0',
    };
    const p = fetch(url, { method: 'POST', body: s.body(i), headers, signal: AbortSignal.timeout(30_000) })
      .then(async (res) => {
        await res.arrayBuffer();
        stats.requests += 1;
        if (res.status === 200 || res.status === 204) stats.samples += s.samples;
        else stats.refused += 1;
      })
      .catch(() => {
        stats.refused += 1;
      })
      .finally(() => {
        inFlight.delete(p);
      });
    inFlight.add(p);
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
      await Promise.all([...inFlight]);
      return { ...stats, ms: Date.now() - started };
    },
  };
}
