// How many gateway replicas share each tenant's global ingest limit, learned
// through a ReplicaRegistry: every `periodMs` this replica records its
// heartbeat and reads how many replicas were seen within `livePeriods`
// periods. A replica that stops (or crashes) stops beating and drops out of
// the count within that window, so the others take over its share. Until the
// first answer, and whenever the store does not answer, the last count stands
// (1 at start: a lone replica must not throttle itself to a fraction).
import { randomUUID } from 'node:crypto';
import { systemClock } from '../../src/clock.ts';
import type { Clock } from '../../src/clock.ts';
import type { ReplicaRegistry } from './replica-registry.ts';

/** Heartbeat period of a gateway replica (a replica's share changes within about three of these). */
export const replicaHeartbeatMs = 5000;

/** A replica counts as live while its last heartbeat is at most this many periods old. */
export const livePeriods = 3;

export interface ReplicaCountOptions {
  readonly periodMs: number;
  /** Called when a heartbeat fails (the count keeps its last value). */
  readonly onFailure?: (message: string) => void;
  /** Called after each heartbeat (the limiter drops idle buckets here). */
  readonly onBeat?: () => void;
}

export class ReplicaCount {
  readonly id = randomUUID();
  readonly #registry: ReplicaRegistry;
  readonly #clock: Clock;
  readonly #options: ReplicaCountOptions;
  #count = 1;
  #timer: { cancel(): void } | undefined;
  #stopped = false;
  #beating: Promise<void> = Promise.resolve();

  constructor(registry: ReplicaRegistry, options: ReplicaCountOptions = { periodMs: replicaHeartbeatMs }, clock: Clock = systemClock) {
    this.#registry = registry;
    this.#options = options;
    this.#clock = clock;
  }

  /** Live replicas, this one included (at least 1). */
  get count(): number {
    return this.#count;
  }

  /** Beats once (resolves when answered, successfully or not), then every period until stop(). */
  start(): Promise<void> {
    this.#beating = this.#beat();
    return this.#beating;
  }

  /** Stops beating; the others stop counting this replica within the live window. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.cancel();
    await this.#beating;
  }

  async #beat(): Promise<void> {
    const counted = await this.#registry.beat(this.id, livePeriods * this.#options.periodMs);
    if (counted.ok) this.#count = Math.max(1, counted.value);
    else this.#options.onFailure?.(counted.error);
    this.#options.onBeat?.();
    if (this.#stopped) return;
    this.#timer = this.#clock.setTimeout(() => {
      this.#beating = this.#beat();
    }, this.#options.periodMs);
  }
}
