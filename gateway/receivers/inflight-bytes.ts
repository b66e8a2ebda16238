// The process's budget of request bytes in flight on the OTLP receivers:
// bodies being read, inflated and decoded, until their answer is written.
// A request reserves its Content-Length before a byte of it is read and
// grows its reservation as bytes arrive beyond that (chunked bodies, gzip
// output), so the bound holds from the first byte; past it the request is
// answered 429 / RESOURCE_EXHAUSTED instead of being read.
import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

/** One request's share of the budget. */
export interface Reservation {
  /** Bytes held now. */
  readonly bytes: number;
  /** Raises the reservation to `total` bytes; false (nothing changed) when the budget cannot give them. */
  ensure(total: number): boolean;
  /** Gives the bytes back; later calls do nothing. */
  release(): void;
}

export class InflightBytes {
  readonly limit: number;
  #used = 0;

  constructor(limit: number) {
    this.limit = limit;
  }

  /** Bytes reserved by requests in flight. */
  get used(): number {
    return this.#used;
  }

  /** A reservation of `bytes`, or undefined when they would pass the limit. */
  reserve(bytes: number): Reservation | undefined {
    if (!this.#take(bytes)) return undefined;
    let held = bytes;
    let released = false;
    return {
      get bytes() {
        return held;
      },
      ensure: (total) => {
        if (released || total <= held) return !released;
        if (!this.#take(total - held)) return false;
        held = total;
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.#used -= held;
        held = 0;
      },
    };
  }

  #take(bytes: number): boolean {
    // An empty budget always admits one request, so a limit below one request's size cannot starve everything.
    if (this.#used > 0 && this.#used + bytes > this.limit) return false;
    this.#used += bytes;
    return true;
  }

  /** Exposes the bytes in flight as a gauge read at scrape time. */
  register(registry: Registry): void {
    const read = (): number => this.#used;
    new Gauge({
      name: 'tenantry_gateway_inflight_request_bytes',
      help: 'OTLP request bytes being read, inflated or decoded (bounded by TENANTRY_MAX_INFLIGHT_BYTES)',
      registers: [registry],
      collect() {
        this.set(read());
      },
    });
  }
}
