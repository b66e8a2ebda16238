// The API's statements in flight, each named so that one nobody waits for
// any more stops inside the store, not only in JavaScript.
//
// Every statement carries `log_comment = '<uuid>'` (and, in server mode, the
// same uuid as its query_id). When its time runs out, its client goes away,
// the store gate ends its turn for another tenant's query, or the process
// shuts down, the runner sends `KILL QUERY WHERE
// Settings['log_comment'] = '<uuid>' ASYNC` on another connection.
//
// Embedded ClickHouse (chDB) needs this most: aborting the client's request
// only settles the JavaScript promise, while the statement runs on inside the
// engine (its C API has no interrupt), holding its connection and one of
// the store gate's query slots. KILL QUERY does stop it (measured:
// a GROUP BY over 2e9 numbers ends with code 394 about 100 ms after the KILL).
// So in embedded mode the runner does not hand chDB the abort signal: the
// statement's own promise, which settles when the engine is done with it,
// holds the store gate's slot, and the next query of any tenant starts on a
// connection that is really free. A statement that does not stop within
// `stopGraceMs` of its KILL gives up the slot anyway (logged).
//
// The uuid is spliced into the KILL, not bound: it goes on the control
// connection, which is not the store's pool (ADR 8), and chDB runs every
// statement with bound parameters one at a time process-wide, so a bound
// KILL would wait behind the very statement it is meant to stop. The uuid
// is made here and checked against its exact pattern before it is spliced.
import { randomUUID } from 'node:crypto';
import type { ClickHouseClient } from '@clickhouse/client';
import type { Logger } from '../../src/log/logger.ts';

/** Why a statement was stopped before it ended ('turn': the store gate gave its turn to another tenant's waiting query). */
export type StopReason = 'timeout' | 'client_gone' | 'shutdown' | 'turn';

/** Longest a killed embedded statement may take to end before its turn is given up anyway. */
export const stopGraceMs = 3000;

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** The SETTINGS entry that names statement `id`. */
export function statementTag(id: string): string {
  if (!uuidPattern.test(id)) throw new Error(`bug: statement id ${id}`);
  return `, log_comment = '${id}'`;
}

/** The KILL QUERY statement that stops statement `id` wherever it runs. */
export function killStatement(id: string, cluster: string | undefined): string {
  if (!uuidPattern.test(id)) throw new Error(`bug: statement id ${id}`);
  const on = cluster === undefined ? '' : ` ON CLUSTER ${cluster}`;
  return `KILL QUERY${on} WHERE Settings['log_comment'] = '${id}' ASYNC`;
}

/** A statement being run: its id and the abort signal its client call gets (none in embedded mode, see above). */
export interface RunningStatement {
  readonly id: string;
  readonly signal: AbortSignal | undefined;
  /** Why it was stopped, once it was. */
  readonly stopped: () => StopReason | undefined;
}

interface Entry {
  readonly controller: AbortController;
  reason: StopReason | undefined;
  /** When it was stopped (performance.now()), to log how long the store took to end it. */
  stoppedAt: number;
}

/** The API's statements in flight and the connection that stops them. */
export class RunningStatements {
  readonly #entries = new Map<string, Entry>();
  readonly #control: Pick<ClickHouseClient, 'command'>;
  readonly #cluster: string | undefined;
  readonly #embedded: boolean;
  readonly #log: Logger;
  #closed = false;

  constructor(control: Pick<ClickHouseClient, 'command'>, options: { readonly cluster: string | undefined; readonly embedded: boolean; readonly log: Logger }) {
    this.#control = control;
    this.#cluster = options.cluster;
    this.#embedded = options.embedded;
    this.#log = options.log;
  }

  /** True once the process began to shut down: new statements are refused. */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Runs one statement: `work` gets its id and the signal the client should
   * see (none in embedded mode, see above). It is stopped after `ms`, when
   * `request` aborts, when `turn` (the store gate's turn signal) aborts, or
   * at shutdown.
   */
  async run<T>(ms: number, request: AbortSignal | undefined, work: (statement: RunningStatement) => Promise<T>, turn?: AbortSignal): Promise<T> {
    const id = randomUUID();
    const entry: Entry = { controller: new AbortController(), reason: undefined, stoppedAt: 0 };
    this.#entries.set(id, entry);
    const timer = setTimeout(() => {
      void this.#stop(id, 'timeout');
    }, ms);
    const onGone = (): void => {
      void this.#stop(id, 'client_gone');
    };
    const onTurnOver = (): void => {
      void this.#stop(id, 'turn');
    };
    request?.addEventListener('abort', onGone, { once: true });
    turn?.addEventListener('abort', onTurnOver, { once: true });
    if (request?.aborted === true) onGone();
    if (turn?.aborted === true) onTurnOver();
    if (this.#closed) void this.#stop(id, 'shutdown');
    try {
      const statement: RunningStatement = { id, signal: this.#embedded ? undefined : entry.controller.signal, stopped: () => entry.reason };
      const running = work(statement);
      return this.#embedded ? await this.#untilEnded(running, entry) : await running;
    } catch (error) {
      // How long a stop takes to free the store is the wait of whoever is next (bench:isolation reads this line).
      if (entry.reason !== undefined)
        this.#log.info('a stopped statement ended', { reason: entry.reason, endedAfterMs: Math.round(performance.now() - entry.stoppedAt) });
      throw error;
    } finally {
      clearTimeout(timer);
      request?.removeEventListener('abort', onGone);
      turn?.removeEventListener('abort', onTurnOver);
      this.#entries.delete(id);
    }
  }

  /** Stops every statement in flight and refuses new ones (SIGTERM); resolves once every KILL was sent. */
  async stopAll(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#entries.keys()].map((id) => this.#stop(id, 'shutdown')));
  }

  /** Aborts the statement's client side and kills it in the store; resolves when the KILL was answered. */
  async #stop(id: string, reason: StopReason): Promise<void> {
    const entry = this.#entries.get(id);
    if (entry === undefined || entry.reason !== undefined) return;
    entry.reason = reason;
    entry.stoppedAt = performance.now();
    entry.controller.abort();
    try {
      await this.#control.command({ query: killStatement(id, this.#cluster) });
    } catch (error) {
      this.#log.warn('could not kill a statement', { reason, error: (error as Error).message });
    }
  }

  /** The statement's own end, or, once it was stopped, at most stopGraceMs more. */
  async #untilEnded<T>(running: Promise<T>, entry: Entry): Promise<T> {
    const stopped = entry.controller.signal;
    if (stopped.aborted) return this.#withGrace(running);
    return Promise.race([
      running,
      new Promise<T>((resolve, reject) => {
        stopped.addEventListener(
          'abort',
          () => {
            this.#withGrace(running).then(resolve, reject);
          },
          { once: true },
        );
      }),
    ]);
  }

  #withGrace<T>(running: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        this.#log.warn('a killed statement did not end in time; its turn is given up', { graceMs: stopGraceMs });
        reject(Object.assign(new Error('statement stopped'), { name: 'AbortError' }));
      }, stopGraceMs);
    });
    return Promise.race([running, late]).finally(() => {
      clearTimeout(timer);
    });
  }
}
